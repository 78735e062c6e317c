// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nats-mark.h"
#include "publish-mark.h"

/* Notes waiting for their messages' answers: a drain's end each, a few seconds' worth. */
#define NOTES 64
/* Control messages of run r are numbered from r << RUN_SHIFT: no run sends 2^40. */
#define RUN_SHIFT 40

struct rt_nats_mark {
	int fd;
	void *area;
	size_t size;
	unsigned int ncpus;
	bool started;
	/* settled[order & mask]: the answer came; cleared as low passes it. */
	_Atomic uint8_t *settled;
	uint64_t mask;
	_Atomic uint64_t low;		/* every message below it is settled */
	_Atomic bool lost_track;	/* an order too far ahead: the mark stays where it is */
	_Atomic uint64_t failures;	/* records lost before their report (rt_nats_mark_failed) */
	uint64_t seen_failures;
	struct rt_pub_place *at;	/* per CPU: the ring's next page, its counts */
	uint64_t note_end[NOTES];
	struct rt_pub_place *note_places;	/* NOTES * ncpus */
	unsigned int first, n;
};

int rt_nats_mark_new(struct rt_nats_mark **out, int fd, unsigned int ncpus,
		     unsigned long max_pending)
{
	struct rt_nats_mark *m = calloc(1, sizeof(*m));
	size_t need = rt_pub_mark_size(ncpus), slots = 4096;
	struct stat st;
	int ret = -ENOMEM;

	*out = NULL;
	if (!m) {
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	m->fd = fd;
	m->ncpus = ncpus;
	m->area = MAP_FAILED;
	/* Room for every message in flight, the control messages beyond the bound included. */
	while (slots < 4 * (size_t)max_pending && slots < (1u << 22))
		slots *= 2;
	m->mask = slots - 1;
	m->settled = calloc(slots, sizeof(*m->settled));
	m->at = calloc(ncpus ?: 1, sizeof(*m->at));
	m->note_places = calloc((size_t)NOTES * (ncpus ?: 1), sizeof(*m->note_places));
	if (!m->settled || !m->at || !m->note_places)
		goto fail;
	ret = -EINVAL;
	if (!need)
		goto fail;
	if (m->fd < 0 && (m->fd = memfd_create("ringtapd-nats", MFD_CLOEXEC)) < 0) {
		ret = -errno;
		goto fail;
	}
	if (fstat(m->fd, &st)) {
		ret = -errno;
		goto fail;
	}
	/* A mark kept by a run with fewer CPUs reads as another's: growing it loses nothing. */
	m->size = (size_t)st.st_size < need ? need : (size_t)st.st_size;
	if ((size_t)st.st_size < need && ftruncate(m->fd, (off_t)need)) {
		ret = -errno;
		goto fail;
	}
	m->area = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
	if (m->area == MAP_FAILED) {
		ret = -errno;
		goto fail;
	}
	*out = m;
	return 0;
fail:
	rt_nats_mark_free(m);
	return ret;
}

void rt_nats_mark_free(struct rt_nats_mark *m)
{
	if (!m)
		return;
	if (m->area != MAP_FAILED)
		munmap(m->area, m->size);
	if (m->fd >= 0)
		close(m->fd);
	free(m->settled);
	free(m->at);
	free(m->note_places);
	free(m);
}

int rt_nats_mark_fd(const struct rt_nats_mark *m)
{
	return m->fd;
}

int rt_nats_mark_resume(struct rt_nats_mark *m, uint64_t key, struct rt_publisher_from *from,
			struct rt_pub_place *places)
{
	uint64_t session, runs, its_key;
	int ret = rt_pub_mark_read(m->area, m->size, m->ncpus, &session, &runs, &its_key, places);

	if (ret)
		return ret;
	/* Other events or another host: the dead run's numbers mean other records here. */
	if (its_key != key)
		return -ESTALE;
	if (runs + 1 >= 1u << (64 - RUN_SHIFT))
		return -EOVERFLOW;
	rt_pub_mark_take_over(m->area, runs);
	*from = (struct rt_publisher_from){
		.session = session, .control = (runs + 1) << RUN_SHIFT, .places = places,
	};
	/* Until this run's first note is settled, the dead run's mark stands. */
	m->started = true;
	return 0;
}

int rt_nats_mark_start(struct rt_nats_mark *m, uint64_t session, uint64_t key)
{
	/* Nothing published yet: the ring's places with numbers 0 (rt_nats_mark_ring_at). */
	int ret = rt_pub_mark_format(m->area, m->size, m->ncpus, session, key, m->at);

	m->started = !ret;
	m->n = 0;
	return ret;
}

void rt_nats_mark_ring_at(struct rt_nats_mark *m, unsigned int cpu, uint64_t page,
			  const struct rt_ring_page_info *before)
{
	struct rt_pub_place *at = &m->at[cpu];

	at->page = page;
	at->events_before = before->events_before;
	at->kernel_lost = before->kernel_lost;
	at->kernel_inexact = before->kernel_inexact;
	at->malformed = before->malformed;
}

void rt_nats_mark_settle(struct rt_nats_mark *m, uint64_t order)
{
	uint64_t low = atomic_load(&m->low);

	/* Below low: settled already (an answer after a failure was counted). */
	if (order < low)
		return;
	if (order - low > m->mask) {
		atomic_store(&m->lost_track, true);
		return;
	}
	atomic_store(&m->settled[order & m->mask], 1);
}

void rt_nats_mark_failed(struct rt_nats_mark *m)
{
	atomic_fetch_add(&m->failures, 1);
}

bool rt_nats_mark_stuck(const struct rt_nats_mark *m)
{
	return atomic_load(&m->lost_track);
}

void rt_nats_mark_note(struct rt_nats_mark *m, uint64_t order_end, const struct rt_publisher *pub)
{
	unsigned int slot;
	struct rt_pub_place *places;

	if (!m->started)
		return;
	/* Nothing new handed over since the last note: that note moves on with the pages. */
	if (m->n && m->note_end[(m->first + m->n - 1) % NOTES] == order_end)
		slot = (m->first + m->n - 1) % NOTES;
	else if (m->n == NOTES)
		/* Full: the newest is replaced by this newer one; the mark only waits longer. */
		slot = (m->first + m->n - 1) % NOTES;
	else
		slot = (m->first + m->n++) % NOTES;
	m->note_end[slot] = order_end;
	places = &m->note_places[(size_t)slot * m->ncpus];
	for (unsigned int cpu = 0; cpu < m->ncpus; cpu++) {
		places[cpu] = m->at[cpu];
		rt_publisher_place(pub, cpu, &places[cpu]);
	}
}

void rt_nats_mark_advance(struct rt_nats_mark *m)
{
	uint64_t low = atomic_load(&m->low);
	int newest = -1;

	if (!m->started || atomic_load(&m->lost_track))
		return;
	while (atomic_load(&m->settled[low & m->mask])) {
		atomic_store(&m->settled[low & m->mask], 0);
		low++;
	}
	atomic_store(&m->low, low);
	/*
	 * After the scan: a failure told before its message was settled is
	 * seen here if the scan saw the settling. The notes it falls in go.
	 */
	if (atomic_load(&m->failures) != m->seen_failures) {
		m->seen_failures = atomic_load(&m->failures);
		m->n = 0;
		return;
	}
	while (m->n && m->note_end[m->first] <= low) {
		newest = (int)m->first;
		m->first = (m->first + 1) % NOTES;
		m->n--;
	}
	if (newest >= 0)
		rt_pub_mark_put(m->area, &m->note_places[(size_t)newest * m->ncpus]);
}
