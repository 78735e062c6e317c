// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "page_ring.h"
#include "subscriber.h"

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010	/* Linux 5.1 */
#endif

/*
 * Sealed so that no one holding a descriptor can change the area's size
 * under the daemon's mapping, and, where the kernel has the seal, so that
 * none can map or write it for writing again (the daemon's own mapping,
 * made before, still writes): a reader could reopen its read-only
 * descriptor through /proc with write access otherwise.
 */
static int seal(int fd)
{
	int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

	if (!fcntl(fd, F_ADD_SEALS, seals | F_SEAL_FUTURE_WRITE))
		return 0;
	if (errno != EINVAL)
		return -errno;
	return fcntl(fd, F_ADD_SEALS, seals) ? -errno : -EOPNOTSUPP;
}

int rt_page_ring_new(struct rt_page_ring **out, unsigned int ncpus, unsigned int slots,
		     unsigned int page_size, struct rt_why *why)
{
	struct rt_ring_geometry g = { ncpus, slots, page_size };
	size_t size = rt_ring_size(&g);
	struct rt_page_ring *pr = calloc(1, sizeof(*pr));
	char path[64];
	void *base;
	int ret;

	*out = NULL;
	if (!pr)
		return rt_why_set(why, -ENOMEM, "out of memory");
	pr->fd = pr->ro_fd = -1;
	if (!size) {
		ret = rt_why_set(why, -EINVAL, "no page ring can be made of %u slot(s) of %u bytes "
				 "per CPU on %u CPUs (ring_pages)", slots, page_size, ncpus);
		goto fail;
	}
	pr->handles = calloc((size_t)ncpus * slots, sizeof(*pr->handles));
	pr->next = calloc(ncpus, sizeof(*pr->next));
	if (!pr->handles || !pr->next) {
		ret = rt_why_set(why, -ENOMEM, "out of memory");
		goto fail;
	}
	pr->fd = memfd_create("ringtap-pages", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (pr->fd < 0 || ftruncate(pr->fd, (off_t)size)) {
		ret = rt_why_set(why, -errno, "a memfd of %zu bytes for the page ring", size);
		goto fail;
	}
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, pr->fd, 0);
	if (base == MAP_FAILED) {
		ret = rt_why_set(why, -errno, "mapping the page ring (%zu bytes)", size);
		goto fail;
	}
	ret = rt_ring_format(&pr->ring, base, size, &g);
	if (ret) {
		munmap(base, size);
		rt_why_set(why, ret, "laying out the page ring");
		goto fail;
	}
	ret = seal(pr->fd);
	if (ret == -EOPNOTSUPP)
		ret = 0;	/* an older kernel: readers are trusted not to reopen it */
	if (ret) {
		rt_why_set(why, ret, "sealing the page ring");
		goto fail;
	}
	/* A reader's descriptor cannot be made writable (fcntl cannot add O_RDWR). */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", pr->fd);
	pr->ro_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (pr->ro_fd < 0) {
		ret = rt_why_set(why, -errno, "a read-only descriptor of the page ring (%s)", path);
		goto fail;
	}
	*out = pr;
	return 0;
fail:
	rt_page_ring_free(pr);
	return ret;
}

int rt_page_ring_adopt(struct rt_page_ring **out, int from_fd, unsigned int slots,
		       const struct rt_ring_geometry *g, struct rt_why *why)
{
	struct rt_ring from;
	struct stat st;
	void *base;
	int ret;

	*out = NULL;
	if (fstat(from_fd, &st))
		return rt_why_set(why, -errno, "its memfd: %s", strerror(errno));
	if (st.st_size <= 0)
		return rt_why_set(why, -EBADMSG, "its memfd is empty");
	/* Read-only: the seal refuses a writable mapping to anyone, this daemon too. */
	base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, from_fd, 0);
	if (base == MAP_FAILED)
		return rt_why_set(why, -errno, "mapping it: %s", strerror(errno));
	ret = rt_ring_attach(&from, base, (size_t)st.st_size);
	if (ret) {
		rt_why_set(why, ret, "it is not a page ring this ringtapd writes");
		goto out;
	}
	/* A reader's page buffer is the old ring's size: no bigger pages. */
	if (from.head.ncpus != g->ncpus || from.head.page_size != g->page_size) {
		ret = rt_why_set(why, -EINVAL, "it has %u CPUs and %u-byte pages, the instance %u "
				 "and %u", from.head.ncpus, from.head.page_size, g->ncpus,
				 g->page_size);
		goto out;
	}
	ret = rt_page_ring_new(out, g->ncpus, slots, g->page_size, why);
	if (!ret)
		ret = rt_ring_continue(&(*out)->ring, &from);
	if (!ret) {
		/* Kept, read-only, for subscribers that resume from pages it holds. */
		(*out)->prev = from;
		(*out)->prev_left = g->ncpus;
		return 0;
	}
out:
	munmap(base, (size_t)st.st_size);
	return ret;
}

const struct rt_ring *rt_page_ring_prev(const struct rt_page_ring *pr)
{
	return pr->prev.base ? &pr->prev : NULL;
}

/* Once every CPU wrote a lap in the new area, the old one holds nothing the new does not cover. */
static void retire_prev(struct rt_page_ring *pr, unsigned int cpu)
{
	uint64_t since = rt_ring_written(&pr->ring, cpu) - rt_ring_written(&pr->prev, cpu);

	if (since != pr->ring.head.slots)
		return;
	if (--pr->prev_left)
		return;
	munmap((void *)pr->prev.base, pr->prev.size);
	memset(&pr->prev, 0, sizeof(pr->prev));
}

void rt_page_ring_set_next(struct rt_page_ring *pr, unsigned int cpu,
			   const struct rt_ring_page_info *counts)
{
	if (cpu < pr->ring.head.ncpus)
		pr->next[cpu] = *counts;
}

void rt_page_ring_free(struct rt_page_ring *pr)
{
	size_t n;

	if (!pr)
		return;
	n = pr->handles ? (size_t)pr->ring.head.ncpus * pr->ring.head.slots : 0;
	for (size_t i = 0; i < n; i++) {
		/* A queue that outlives the ring keeps its page: it may not point into the unmapped area. */
		if (pr->handles[i] && pr->handles[i]->refs > 1 && rt_page_buf_detach(pr->handles[i]))
			continue;	/* leaked rather than left dangling */
		rt_page_buf_put(pr->handles[i]);
	}
	if (pr->ring.base)
		munmap(pr->ring.base, pr->ring.size);
	if (pr->prev.base)
		munmap((void *)pr->prev.base, pr->prev.size);
	if (pr->ro_fd >= 0)
		close(pr->ro_fd);
	if (pr->fd >= 0)
		close(pr->fd);
	free(pr->handles);
	free(pr->next);
	free(pr);
}

static struct rt_page_buf **handle_of(struct rt_page_ring *pr, const uint8_t *room)
{
	const struct rt_ring_head *h = &pr->ring.head;
	size_t slot = (size_t)(room - pr->ring.base - h->slots_offset - h->slot_head_size) /
		      h->slot_size;

	return &pr->handles[slot];
}

struct rt_page_buf *rt_page_ring_begin(struct rt_page_ring *pr, unsigned int cpu)
{
	uint8_t *room = rt_ring_begin(&pr->ring, cpu);
	struct rt_page_buf **h = handle_of(pr, room);

	/* The writer marked the slot, but its bytes are still the old page's. */
	if (*h && (*h)->refs > 1) {
		if (rt_page_buf_detach(*h)) {
			rt_ring_abort(&pr->ring, cpu);
			return NULL;
		}
		pr->copies++;
		rt_page_buf_put(*h);
		*h = NULL;
	}
	if (!*h && !(*h = rt_page_buf_wrap(room))) {
		rt_ring_abort(&pr->ring, cpu);
		return NULL;
	}
	(*h)->len = 0;
	return *h;
}

void rt_page_ring_commit(struct rt_page_ring *pr, unsigned int cpu,
			 const struct rt_ring_page_info *info)
{
	struct rt_ring_page_info *next = &pr->next[cpu];
	bool malformed = info->flags & RT_RING_MALFORMED;

	rt_ring_commit(&pr->ring, cpu, info);
	*next = *info;
	/* A malformed page's events are not counted: how many it held is unknown. */
	next->events_before = info->events_before + (malformed ? 0 : info->records);
	next->malformed = info->malformed + malformed;
	if (pr->prev.base)
		retire_prev(pr, cpu);
}

void rt_page_ring_abort(struct rt_page_ring *pr, unsigned int cpu)
{
	rt_ring_abort(&pr->ring, cpu);
}

uint64_t rt_page_ring_next(const struct rt_page_ring *pr, unsigned int cpu,
			   struct rt_ring_page_info *counts)
{
	*counts = pr->next[cpu];
	return rt_ring_written(&pr->ring, cpu);
}
