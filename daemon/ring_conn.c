// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>

#include "acl.h"
#include "encode.h"
#include "page_ring.h"
#include "ring_conn.h"
#include "util.h"

/*
 * The ring holds every page the instance records, whoever enabled its
 * events: only a peer allowed every event may map it. On the Unix socket
 * that is every authorized peer (root, or the socket's group); a TCP
 * client is remote (no memory to share) and its certificate's globs may
 * be fewer.
 */
const char *ring_conn_refusal(bool tcp, const char *const *allowed,
			      const struct rt_page_ring *ring)
{
	if (tcp)
		return "the RING transport is for local clients on the Unix socket, not TCP";
	if (allowed && !rt_acl_allows_glob(allowed, "*:*"))
		return "the ring holds every recorded event: this client may select only some";
	if (!ring)
		return "this daemon has no page ring";
	return NULL;
}

struct ring_reader *ring_reader_new(unsigned int ncpus)
{
	struct ring_reader *r = calloc(1, sizeof(*r));

	if (r && (!(r->told = calloc(ncpus ?: 1, sizeof(*r->told))) ||
		  !(r->told_events = calloc(ncpus ?: 1, sizeof(*r->told_events))))) {
		free(r->told);
		free(r);
		return NULL;
	}
	if (r)
		r->ncpus = ncpus;
	return r;
}

void ring_reader_free(struct ring_reader *r)
{
	if (!r)
		return;
	free(r->told);
	free(r->told_events);
	free(r);
}

/* Events the CPU's pages held, read from the kernel, before its next page. */
static uint64_t events_read(const struct rt_page_ring *pr, unsigned int cpu)
{
	struct rt_ring_page_info next;

	rt_page_ring_next(pr, cpu, &next);
	return next.events_before - next.kernel_lost;
}

int ring_reader_ring_frame(struct ring_reader *r, const struct rt_page_ring *pr,
			   struct rt_buf *out)
{
	unsigned int n = r->ncpus;
	_cleanup_free_ uint64_t *v = calloc((size_t)n * 5 ?: 1, sizeof(*v));
	Ringtap__Ring msg = RINGTAP__RING__INIT;

	if (!v)
		return -ENOMEM;
	msg.size = pr->ring.size;
	msg.start_page = v;
	msg.events_before = v + n;
	msg.kernel_lost = v + 2 * n;
	msg.kernel_inexact = v + 3 * n;
	msg.malformed = v + 4 * n;
	msg.n_start_page = msg.n_events_before = msg.n_kernel_lost = msg.n_kernel_inexact =
		msg.n_malformed = n;
	for (unsigned int cpu = 0; cpu < n; cpu++) {
		struct rt_ring_page_info next;

		msg.start_page[cpu] = rt_page_ring_next(pr, cpu, &next);
		msg.events_before[cpu] = next.events_before;
		msg.kernel_lost[cpu] = next.kernel_lost;
		msg.kernel_inexact[cpu] = next.kernel_inexact;
		msg.malformed[cpu] = next.malformed;
		r->told[cpu] = msg.start_page[cpu];
		r->told_events[cpu] = events_read(pr, cpu);
	}
	return rt_encode_ring_frame(&msg, out);
}

unsigned int ring_reader_moved(const struct ring_reader *r, const struct rt_page_ring *pr)
{
	unsigned int moved = 0;

	for (unsigned int cpu = 0; cpu < r->ncpus; cpu++)
		moved += rt_ring_written(&pr->ring, cpu) != r->told[cpu];
	return moved;
}

int ring_reader_ready_frame(const struct ring_reader *r, const struct rt_page_ring *pr,
			    struct rt_buf *out)
{
	unsigned int moved = ring_reader_moved(r, pr);
	_cleanup_free_ uint32_t *cpus = calloc(moved ?: 1, sizeof(*cpus));
	_cleanup_free_ uint64_t *written = calloc(moved ?: 1, sizeof(*written));
	Ringtap__RingReady msg = RINGTAP__RING_READY__INIT;

	if (!cpus || !written)
		return -ENOMEM;
	for (unsigned int cpu = 0; cpu < r->ncpus && msg.n_cpus < moved; cpu++) {
		uint64_t w = rt_ring_written(&pr->ring, cpu);

		if (w == r->told[cpu])
			continue;
		cpus[msg.n_cpus] = cpu;
		written[msg.n_cpus++] = w;
	}
	msg.cpus = cpus;
	msg.written = written;
	msg.n_written = msg.n_cpus;
	return rt_encode_ring_ready_frame(&msg, out);
}

uint64_t ring_reader_told(struct ring_reader *r, const struct rt_page_ring *pr)
{
	uint64_t newly = 0;

	for (unsigned int cpu = 0; cpu < r->ncpus; cpu++) {
		uint64_t events = events_read(pr, cpu);

		r->told[cpu] = rt_ring_written(&pr->ring, cpu);
		newly += events > r->told_events[cpu] ? events - r->told_events[cpu] : 0;
		r->told_events[cpu] = events;
	}
	return newly;
}
