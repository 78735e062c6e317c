// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "publish-mark.h"

struct mark_head {
	uint64_t magic;
	uint32_t version;
	uint32_t ncpus;
	uint64_t session;
	uint64_t runs;
	_Atomic uint64_t current;	/* 0 or 1: the copy whole */
	uint64_t key;			/* what the run publishes, as its writer hashed it */
	uint64_t reserved[2];
};

static struct rt_pub_place *copy_of(void *base, unsigned int ncpus, uint64_t which)
{
	return (struct rt_pub_place *)((uint8_t *)base + sizeof(struct mark_head)) + which * ncpus;
}

size_t rt_pub_mark_size(unsigned int ncpus)
{
	if (!ncpus || ncpus > 1u << 16)
		return 0;
	return sizeof(struct mark_head) + 2 * (size_t)ncpus * sizeof(struct rt_pub_place);
}

int rt_pub_mark_format(void *base, size_t size, unsigned int ncpus, uint64_t session,
		       uint64_t key, const struct rt_pub_place *places)
{
	struct mark_head *h = base;
	size_t bytes = (size_t)ncpus * sizeof(*places);

	if (!rt_pub_mark_size(ncpus) || size < rt_pub_mark_size(ncpus))
		return -EINVAL;
	memset(base, 0, rt_pub_mark_size(ncpus));
	memcpy(copy_of(base, ncpus, 0), places, bytes);
	memcpy(copy_of(base, ncpus, 1), places, bytes);
	h->version = RT_PUB_MARK_VERSION;
	h->ncpus = ncpus;
	h->session = session;
	h->key = key;
	/* Last: a crash before it leaves no mark, not half of one. */
	atomic_store_explicit((_Atomic uint64_t *)&h->magic, RT_PUB_MARK_MAGIC,
			      memory_order_release);
	return 0;
}

void rt_pub_mark_put(void *base, const struct rt_pub_place *places)
{
	struct mark_head *h = base;
	uint64_t other = !atomic_load_explicit(&h->current, memory_order_relaxed);

	memcpy(copy_of(base, h->ncpus, other), places, (size_t)h->ncpus * sizeof(*places));
	atomic_store_explicit(&h->current, other, memory_order_release);
}

int rt_pub_mark_read(const void *base, size_t size, unsigned int ncpus, uint64_t *session,
		     uint64_t *runs, uint64_t *key, struct rt_pub_place *places)
{
	const struct mark_head *h = base;
	uint64_t which;

	if (size < sizeof(*h) || h->magic != RT_PUB_MARK_MAGIC)
		return -EBADMSG;
	if (h->version != RT_PUB_MARK_VERSION)
		return -EPROTONOSUPPORT;
	if (!rt_pub_mark_size(h->ncpus) || size < rt_pub_mark_size(h->ncpus))
		return -EBADMSG;
	if (h->ncpus != ncpus)
		return -EINVAL;
	which = atomic_load_explicit((_Atomic uint64_t *)&h->current, memory_order_acquire);
	if (which > 1)
		return -EBADMSG;
	memcpy(places, copy_of((void *)base, ncpus, which), (size_t)ncpus * sizeof(*places));
	*session = h->session;
	*runs = h->runs;
	*key = h->key;
	return 0;
}

void rt_pub_mark_take_over(void *base, uint64_t runs)
{
	((struct mark_head *)base)->runs = runs + 1;
}
