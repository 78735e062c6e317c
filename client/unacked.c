// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unacked.h"

/* More than the consumer's MaxAckPending ever leaves open: a file past it is not ours. */
#define UNACKED_MAX (1u << 20)

void rt_unacked_release(struct rt_unacked *u)
{
	free(u->seqs);
	memset(u, 0, sizeof(*u));
}

/* The index of the first sequence not below seq. */
static size_t lower_bound(const struct rt_unacked *u, uint64_t seq)
{
	size_t lo = 0, hi = u->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (u->seqs[mid] < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int rt_unacked_add(struct rt_unacked *u, uint64_t seq)
{
	size_t at = lower_bound(u, seq);

	if (at < u->n && u->seqs[at] == seq)
		return 0;
	if (u->n >= UNACKED_MAX)
		return -E2BIG;
	if (u->n == u->cap) {
		size_t cap = u->cap ? 2 * u->cap : 256;
		uint64_t *more = realloc(u->seqs, cap * sizeof(*more));

		if (!more)
			return -ENOMEM;
		u->seqs = more;
		u->cap = cap;
	}
	memmove(u->seqs + at + 1, u->seqs + at, (u->n - at) * sizeof(*u->seqs));
	u->seqs[at] = seq;
	u->n++;
	return 0;
}

bool rt_unacked_has(const struct rt_unacked *u, uint64_t seq)
{
	size_t at = lower_bound(u, seq);

	return at < u->n && u->seqs[at] == seq;
}

void rt_unacked_remove(struct rt_unacked *u, uint64_t seq)
{
	size_t at = lower_bound(u, seq);

	if (at < u->n && u->seqs[at] == seq) {
		memmove(u->seqs + at, u->seqs + at + 1, (u->n - at - 1) * sizeof(*u->seqs));
		u->n--;
	}
}

void rt_unacked_prune(struct rt_unacked *u, uint64_t ack_floor)
{
	size_t keep_from = lower_bound(u, ack_floor + 1);

	if (ack_floor == UINT64_MAX)
		keep_from = u->n;
	memmove(u->seqs, u->seqs + keep_from, (u->n - keep_from) * sizeof(*u->seqs));
	u->n -= keep_from;
}

int rt_unacked_parse(struct rt_unacked *u, const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		uint64_t seq = 0;
		const char *digits = p;
		int ret;

		while (p < end && *p >= '0' && *p <= '9') {
			uint64_t digit = (uint64_t)(*p++ - '0');

			if (seq > (UINT64_MAX - digit) / 10)
				return -EBADMSG;
			seq = seq * 10 + digit;
		}
		/* Stream sequences begin at 1. */
		if (p == digits || p == end || *p != '\n' || !seq)
			return -EBADMSG;
		p++;
		ret = rt_unacked_add(u, seq);
		if (ret)
			return ret == -E2BIG ? -EBADMSG : ret;
	}
	return 0;
}

int rt_unacked_format(const struct rt_unacked *u, char **text, size_t *len)
{
	/* 20 digits and a newline each. */
	char *buf = malloc(u->n * 21 + 1), *p = buf;

	if (!buf)
		return -ENOMEM;
	*p = '\0';
	for (size_t i = 0; i < u->n; i++)
		p += sprintf(p, "%" PRIu64 "\n", u->seqs[i]);
	*text = buf;
	*len = (size_t)(p - buf);
	return 0;
}
