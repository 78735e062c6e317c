// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>

#include "acl.h"
#include "conn.h"
#include "page_ring.h"
#include "ring_conn.h"
#include "tracefs.h"
#include "util.h"

static unsigned int ncpus_of(const struct rt_conn *c)
{
	return (unsigned int)rt_session_ncpus(c->srv->session);
}

/*
 * The ring holds every page the instance records, whoever enabled its
 * events: only a peer allowed every event may map it. On the Unix socket
 * that is every authorized peer (root, or the socket's group); a TCP
 * client is remote (no memory to share) and its certificate's globs may
 * be fewer.
 */
bool ring_conn_allowed(const struct rt_conn *c, const char **why)
{
	if (c->tcp) {
		*why = "the RING transport is for local clients on the Unix socket, not TCP";
		return false;
	}
	if (c->allowed && !rt_acl_allows_glob(c->allowed, "*:*")) {
		*why = "the ring holds every recorded event: this client may select only some";
		return false;
	}
	if (!c->srv->ring) {
		*why = "this daemon has no page ring";
		return false;
	}
	return true;
}

int ring_conn_new(struct rt_conn *c)
{
	struct ring_reader *r = calloc(1, sizeof(*r));

	if (r && !(r->told = calloc(ncpus_of(c), sizeof(*r->told)))) {
		free(r);
		r = NULL;
	}
	c->ring = r;
	return r ? 0 : -ENOMEM;
}

void ring_conn_free(struct rt_conn *c)
{
	if (!c->ring)
		return;
	free(c->ring->told);
	free(c->ring);
	c->ring = NULL;
}

int ring_conn_start(struct rt_conn *c)
{
	struct rt_page_ring *pr = c->srv->ring;
	unsigned int n = ncpus_of(c);
	_cleanup_free_ uint64_t *v = calloc((size_t)n * 5, sizeof(*v));
	Ringtap__Ring msg = RINGTAP__RING__INIT;
	struct rt_buf b = { 0 };
	int ret;

	if (!v || !fanout_raw_schemas(&c->srv->fan, &c->out))
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
		c->ring->told[cpu] = msg.start_page[cpu];
	}
	ret = rt_encode_ring_frame(&msg, &b);
	if (ret) {
		rt_buf_free(&b);
		return ret;
	}
	c->pass_fd_at = rt_subscriber_queued_bytes(&c->out.sub);
	ret = conn_push(c, &b);
	if (!ret)
		c->pass_fd = pr->ro_fd;
	return ret;
}

bool ring_conn_notify(struct rt_conn *c, bool last)
{
	struct rt_page_ring *pr = c->srv->ring;
	unsigned int n = ncpus_of(c), moved = 0;
	_cleanup_free_ uint32_t *cpus = NULL;
	_cleanup_free_ uint64_t *written = NULL;
	Ringtap__RingReady msg = RINGTAP__RING_READY__INIT;
	struct rt_buf b = { 0 };

	for (unsigned int cpu = 0; cpu < n; cpu++)
		moved += rt_ring_written(&pr->ring, cpu) != c->ring->told[cpu];
	if (!moved)
		return true;
	/* What waits unsent goes first; a note behind it would only be merged into the next. */
	if (!last && rt_subscriber_queued_any(&c->out.sub)) {
		if (!conn_write(c))
			return false;
		if (rt_subscriber_queued_any(&c->out.sub))
			return true;
	}
	/* Pages may hold events enabled since: their Schemas come before the note. */
	cpus = calloc(moved, sizeof(*cpus));
	written = calloc(moved, sizeof(*written));
	if (!cpus || !written || !fanout_raw_schemas(&c->srv->fan, &c->out)) {
		conn_out_of_memory(c, "for a RingReady");
		return true;
	}
	for (unsigned int cpu = 0; cpu < n && msg.n_cpus < moved; cpu++) {
		uint64_t w = rt_ring_written(&pr->ring, cpu);

		if (w == c->ring->told[cpu])
			continue;
		cpus[msg.n_cpus] = cpu;
		written[msg.n_cpus++] = w;
	}
	msg.cpus = cpus;
	msg.written = written;
	msg.n_written = msg.n_cpus;
	if (rt_encode_ring_ready_frame(&msg, &b) || conn_push(c, &b)) {
		rt_buf_free(&b);
		conn_out_of_memory(c, "for a RingReady");
		return true;
	}
	for (size_t i = 0; i < msg.n_cpus; i++)
		c->ring->told[cpus[i]] = written[i];
	c->write_due = true;
	return true;
}
