// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"

static const uint8_t magic[8] = "RTSTATE";

/* --- writing ------------------------------------------------------------- */

static int put_u32(struct rt_buf *b, uint32_t v)
{
	uint8_t le[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

	return rt_buf_put(b, le, sizeof(le));
}

static int put_u64(struct rt_buf *b, uint64_t v)
{
	int ret = put_u32(b, (uint32_t)v);

	return ret ? ret : put_u32(b, (uint32_t)(v >> 32));
}

static int put_blob(struct rt_buf *b, const void *p, size_t len)
{
	int ret;

	if (len > UINT32_MAX)
		return -EINVAL;
	ret = put_u32(b, (uint32_t)len);
	return ret || !len ? ret : rt_buf_put(b, p, len);
}

/* A string carries its NUL, so the reader can point at it. */
static int put_str(struct rt_buf *b, const char *s)
{
	return put_blob(b, s ? s : "", strlen(s ? s : "") + 1);
}

static void patch_u32(struct rt_buf *b, size_t at, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b->data[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

/* A record's length goes first, filled in once the record is written. */
static int begin_record(struct rt_buf *b, size_t *at)
{
	*at = b->len;
	return put_u32(b, 0);
}

static int end_record(struct rt_buf *b, size_t at)
{
	size_t len = b->len - at - 4;

	if (len > UINT32_MAX)
		return -EINVAL;
	patch_u32(b, at, (uint32_t)len);
	return 0;
}

static int put_sub(struct rt_buf *b, const struct rt_state_sub *s)
{
	size_t at;
	int ret;

	if ((ret = begin_record(b, &at)) || (ret = put_u32(b, s->id)) ||
	    (ret = put_u32(b, s->encoding)) || (ret = put_u32(b, s->version)) ||
	    (ret = put_u32(b, s->uid)) || (ret = put_u32(b, (uint32_t)s->pid)) ||
	    (ret = put_u32(b, s->latency_ms)) || (ret = put_str(b, s->name)) ||
	    (ret = put_str(b, s->owner)) ||
	    (ret = put_blob(b, s->subscription, s->subscription_len)) ||
	    (ret = put_blob(b, s->schema_sent, s->schema_sent_len)) ||
	    (ret = put_u64(b, s->raw_schemas)) || (ret = put_u64(b, s->delivered)) ||
	    (ret = put_u64(b, s->dropped)) || (ret = put_u64(b, s->kernel_lost)) ||
	    (ret = put_blob(b, s->unsent, s->unsent_len)) || (ret = put_u32(b, s->transport)) ||
	    (ret = put_u32(b, s->numbered)) ||
	    (ret = put_blob(b, s->catch_up, s->catch_up_len)))
		return ret;
	return end_record(b, at);
}

int rt_state_write(const struct rt_state *st, struct rt_buf *out)
{
	size_t body, ring;
	int ret;

	uint32_t version = RT_STATE_VERSION;

	if (st->ncpus > RT_STATE_MAX_CPUS || st->n_subs > RT_STATE_MAX_SUBS)
		return -EINVAL;
	/* A release that would skip catch-up places must not read this state at all. */
	for (uint32_t i = 0; i < st->n_subs; i++)
		if (st->subs[i].catch_up_len)
			version = RT_STATE_VERSION_CATCH_UP;
	if ((ret = rt_buf_put(out, magic, sizeof(magic))) || (ret = put_u32(out, version)) ||
	    (ret = begin_record(out, &body)) || (ret = put_str(out, st->instance)) ||
	    (ret = put_str(out, st->clock)) || (ret = put_u64(out, st->buffer_kb)) ||
	    (ret = put_u32(out, st->ncpus)))
		return ret;
	for (uint32_t i = 0; i < st->ncpus; i++) {
		size_t at;

		const struct rt_state_cpu *cpu = &st->cpus[i];

		if ((ret = begin_record(out, &at)) || (ret = put_u64(out, cpu->pages)) ||
		    (ret = put_u64(out, cpu->records)) || (ret = put_u64(out, cpu->kernel_lost)) ||
		    (ret = put_u64(out, cpu->ring.written)) ||
		    (ret = put_u64(out, cpu->ring.events_before)) ||
		    (ret = put_u64(out, cpu->ring.kernel_lost)) ||
		    (ret = put_u64(out, cpu->ring.kernel_inexact)) ||
		    (ret = put_u64(out, cpu->ring.malformed)) || (ret = put_u64(out, cpu->unknown)) ||
		    (ret = put_u64(out, cpu->inexact_pages)) || (ret = end_record(out, at)))
			return ret;
	}
	if ((ret = put_u32(out, st->n_subs)))
		return ret;
	for (uint32_t i = 0; i < st->n_subs; i++)
		if ((ret = put_sub(out, &st->subs[i])))
			return ret;
	if ((ret = begin_record(out, &ring)) || (ret = put_u32(out, st->ring_slots)) ||
	    (ret = put_u32(out, st->ring_page_size)) || (ret = end_record(out, ring)))
		return ret;
	if ((ret = begin_record(out, &ring)) || (ret = put_u32(out, st->at_start)) ||
	    (ret = put_blob(out, st->secret, st->secret_len)) || (ret = end_record(out, ring)))
		return ret;
	return end_record(out, body);
}

/* --- reading ------------------------------------------------------------- */

/* A cursor that never passes end; a read past it sets short_read and yields zeros. */
struct cursor {
	const uint8_t *p, *end;
	bool short_read;
};

static const uint8_t *take(struct cursor *c, size_t n)
{
	const uint8_t *at = c->p;

	if (c->short_read || (size_t)(c->end - c->p) < n) {
		c->short_read = true;
		return NULL;
	}
	c->p += n;
	return at;
}

static uint32_t get_u32(struct cursor *c)
{
	const uint8_t *p = take(c, 4);

	return p ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		   (uint32_t)p[3] << 24 : 0;
}

static uint64_t get_u64(struct cursor *c)
{
	uint64_t lo = get_u32(c);

	return lo | (uint64_t)get_u32(c) << 32;
}

static const uint8_t *get_blob(struct cursor *c, size_t *len)
{
	*len = get_u32(c);
	return take(c, *len);
}

/* NULL for a string without its NUL or with one inside. */
static const char *get_str(struct cursor *c)
{
	size_t len;
	const uint8_t *p = get_blob(c, &len);

	if (!p || !len || p[len - 1] || memchr(p, '\0', len - 1)) {
		c->short_read = true;
		return NULL;
	}
	return (const char *)p;
}

/* Whether a record holds more than a field an earlier release ended it with. */
static bool more(const struct cursor *c)
{
	return !c->short_read && c->p < c->end;
}

/* The record a length opens: a cursor over it alone, the outer one moved past it. */
static struct cursor get_record(struct cursor *c)
{
	uint32_t len = get_u32(c);
	const uint8_t *p = take(c, len);

	return (struct cursor){ p, p ? p + len : NULL, !p };
}

static int get_sub(struct cursor *outer, struct rt_state_sub *s)
{
	struct cursor c = get_record(outer);

	s->id = get_u32(&c);
	s->encoding = get_u32(&c);
	s->version = get_u32(&c);
	s->uid = get_u32(&c);
	s->pid = (int32_t)get_u32(&c);
	s->latency_ms = get_u32(&c);
	s->name = get_str(&c);
	s->owner = get_str(&c);
	s->subscription = get_blob(&c, &s->subscription_len);
	s->schema_sent = get_blob(&c, &s->schema_sent_len);
	s->raw_schemas = get_u64(&c);
	s->delivered = get_u64(&c);
	s->dropped = get_u64(&c);
	s->kernel_lost = get_u64(&c);
	s->unsent = get_blob(&c, &s->unsent_len);
	/* The first release's record ends here: a socket subscriber. */
	s->transport = more(&c) ? get_u32(&c) : RT_STATE_TRANSPORT_SOCKET;
	/* Added later under version 1: a release before it kept no resumable subscriber. */
	s->numbered = more(&c) ? get_u32(&c) != 0 : false;
	/* Later still: a release before it kept no subscriber catching up. */
	s->catch_up = more(&c) ? get_blob(&c, &s->catch_up_len) : NULL;
	if (!s->catch_up)
		s->catch_up_len = 0;
	return c.short_read || s->catch_up_len % sizeof(uint64_t) ? -EINVAL : 0;
}

int rt_state_read(const uint8_t *buf, size_t len, struct rt_state *st, struct rt_why *why)
{
	struct cursor outer = { buf, buf + len, false }, c;
	const uint8_t *head = take(&outer, sizeof(magic));
	int ret = 0;

	memset(st, 0, sizeof(*st));
	if (!head || memcmp(head, magic, sizeof(magic)))
		return rt_why_set(why, -EINVAL, "not a ringtapd state");
	st->version = get_u32(&outer);
	if (outer.short_read)
		return rt_why_set(why, -EINVAL, "the state ends in its header");
	if (st->version != RT_STATE_VERSION && st->version != RT_STATE_VERSION_CATCH_UP)
		return rt_why_set(why, -EPROTONOSUPPORT, "state version %u: this ringtapd reads "
				  "versions %u and %u only", st->version, RT_STATE_VERSION,
				  RT_STATE_VERSION_CATCH_UP);
	c = get_record(&outer);
	st->instance = get_str(&c);
	st->clock = get_str(&c);
	st->buffer_kb = get_u64(&c);
	st->ncpus = get_u32(&c);
	if (c.short_read)
		return rt_why_set(why, -EINVAL, "the state's settings are cut short");
	/* Every CPU's record takes at least its length: a count the bytes cannot hold is a lie. */
	if (st->ncpus > RT_STATE_MAX_CPUS || st->ncpus > (size_t)(c.end - c.p) / 4)
		return rt_why_set(why, -EINVAL, "the state names %u CPUs", st->ncpus);
	st->cpus = calloc(st->ncpus ?: 1, sizeof(*st->cpus));
	if (!st->cpus)
		return -ENOMEM;
	for (uint32_t i = 0; i < st->ncpus; i++) {
		struct cursor r = get_record(&c);

		st->cpus[i].pages = get_u64(&r);
		st->cpus[i].records = get_u64(&r);
		st->cpus[i].kernel_lost = get_u64(&r);
		if (more(&r)) {
			struct rt_state_ring_cpu *ring = &st->cpus[i].ring;

			ring->written = get_u64(&r);
			ring->events_before = get_u64(&r);
			ring->kernel_lost = get_u64(&r);
			ring->kernel_inexact = get_u64(&r);
			ring->malformed = get_u64(&r);
			st->cpus[i].unknown = get_u64(&r);
			st->cpus[i].inexact_pages = get_u64(&r);
		}
		if (r.short_read || c.short_read) {
			ret = rt_why_set(why, -EINVAL, "cpu%u's counts are cut short", i);
			goto fail;
		}
	}
	st->n_subs = get_u32(&c);
	if (c.short_read || st->n_subs > RT_STATE_MAX_SUBS || st->n_subs > (size_t)(c.end - c.p) / 4) {
		ret = rt_why_set(why, -EINVAL, "the state's subscriber count is damaged");
		goto fail;
	}
	st->subs = calloc(st->n_subs ?: 1, sizeof(*st->subs));
	if (!st->subs) {
		ret = -ENOMEM;
		goto fail;
	}
	for (uint32_t i = 0; i < st->n_subs; i++)
		if (get_sub(&c, &st->subs[i]) || c.short_read) {
			ret = rt_why_set(why, -EINVAL, "subscriber %u of %u is cut short", i + 1,
					 st->n_subs);
			goto fail;
		}
	if (more(&c)) {
		struct cursor r = get_record(&c);

		st->ring_slots = get_u32(&r);
		st->ring_page_size = get_u32(&r);
		if (r.short_read || c.short_read) {
			ret = rt_why_set(why, -EINVAL, "the page ring's geometry is cut short");
			goto fail;
		}
	}
	if (more(&c)) {
		struct cursor r = get_record(&c);

		st->at_start = get_u32(&r) != 0;
		st->secret = get_blob(&r, &st->secret_len);
		if (r.short_read || c.short_read) {
			ret = rt_why_set(why, -EINVAL, "the resume secret's record is cut short");
			goto fail;
		}
	}
	return 0;
fail:
	rt_state_release(st);
	return ret;
}

void rt_state_release(struct rt_state *st)
{
	free(st->cpus);
	free(st->subs);
	st->cpus = NULL;
	st->subs = NULL;
	st->ncpus = st->n_subs = 0;
	st->ring_slots = st->ring_page_size = 0;
}
