// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The fan-out: each decoded record into a subscriber's queue, encoded once
 * per encoding (DECODED with or without common fields, FIXED) and copied,
 * or packed straight into the queue of a subscriber alone with its
 * encoding; a raw page whole into a RAW subscriber's. Whatever cannot be
 * queued is counted as lost to that subscriber and reported in its stream.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "fanout.h"
#include "filter.h"
#include "layout.h"
#include "legacy.h"
#include "util.h"

void fanout_release(struct fanout *f)
{
	rt_buf_free(&f->packed_fixed);
	free(f->legacy_scratch);
	f->legacy_scratch = NULL;
}

int fanout_choose_encoding(struct fanout *f, struct fanout_sub *t)
{
	const char *const *only = (const char *const *)t->only;
	struct fanout_way *w;
	int ret;

	fanout_release_encoding(f, t);
	if (t->encoding != RINGTAP__ENCODING__DECODED)
		return 0;
	for (w = f->ways; w; w = w->next)
		if (rt_record_encoder_is(w->encoder, t->common, only) &&
		    rt_record_encoder_numbered(w->encoder) == t->numbered)
			break;
	if (!w) {
		w = calloc(1, sizeof(*w));
		if (!w)
			return -ENOMEM;
		ret = rt_record_encoder_new(&w->encoder, f->layout, t->common, only);
		if (ret) {
			free(w);
			return ret;
		}
		rt_record_encoder_set_numbered(w->encoder, t->numbered);
		w->next = f->ways;
		f->ways = w;
	}
	w->users++;
	t->way = w;
	return 0;
}

void fanout_release_encoding(struct fanout *f, struct fanout_sub *t)
{
	struct fanout_way *w = t->way;

	t->way = NULL;
	if (!w || --w->users)
		return;
	for (struct fanout_way **p = &f->ways; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	rt_record_encoder_free(w->encoder);
	rt_buf_free(&w->packed);
	free(w);
}

int fanout_push_schema(const struct fanout *f, struct fanout_sub *t, const struct tep_event *ev)
{
	const struct rt_layout *l = f->layout;
	struct rt_buf b = { 0 };
	unsigned int offsets[128], fixed;
	_cleanup_free_ char *legacy_format = NULL;
	int ret;

	switch (t->encoding) {
	case RINGTAP__ENCODING__FIXED:
		ret = rt_legacy_offsets(t->legacy, ev, offsets, 128, &fixed);
		ret = ret ?: rt_legacy_format(t->legacy, ev, rt_layout_format(l, ev->id),
					      &legacy_format);
		ret = ret ?: rt_encode_schema_frame(ev, offsets, legacy_format, NULL, &b);
		break;
	case RINGTAP__ENCODING__RAW:
		ret = rt_encode_schema_frame(ev, NULL, rt_layout_format(l, ev->id), NULL, &b);
		break;
	default:
		ret = rt_encode_schema_frame(ev, NULL, NULL, (const char *const *)t->only, &b);
		break;
	}
	ret = ret ?: rt_subscriber_push_schema(&t->sub, (unsigned int)ev->id, b.data, b.len);
	rt_buf_free(&b);
	return ret;
}

/* The record as this subscriber's encoding sends it, encoded once per record and way. */
static struct rt_buf *packed_for(struct fanout *f, struct fanout_sub *t,
				 const struct rt_record *rec)
{
	struct fanout_way *w = t->way;
	int n;

	if (t->encoding != RINGTAP__ENCODING__FIXED) {
		if (w->record != f->records) {
			w->record = f->records;
			w->packed.len = 0;
			w->failed = rt_record_encoder_put(w->encoder, rec, &w->packed) != 0;
		}
		return w->failed ? NULL : &w->packed;
	}
	/* Numbered or not: the same record packed again when subscribers differ. */
	if (f->packed_fixed_record == f->records && f->packed_fixed_numbered == t->numbered)
		return f->packed_fixed.len ? &f->packed_fixed : NULL;
	f->packed_fixed_record = f->records;
	f->packed_fixed_numbered = t->numbered;
	f->packed_fixed.len = 0;
	/* A record fits a sub-buffer; its legacy form adds at most a header and alignment. */
	if (!f->legacy_scratch) {
		f->legacy_scratch_size = f->layout->sub_buffer_size + t->legacy->header_size +
					 RT_LEGACY_SLACK;
		f->legacy_scratch = malloc(f->legacy_scratch_size);
		if (!f->legacy_scratch)
			return NULL;
	}
	n = rt_legacy_rewrite(t->legacy, rec, f->layout, f->legacy_scratch,
			      f->legacy_scratch_size);
	if (n < 0 || rt_encode_fixed_record(rec->timestamp, t->numbered ? rec->seq : 0,
					    f->legacy_scratch, (size_t)n,
					    &f->packed_fixed)) {
		f->packed_fixed.len = 0;
		return NULL;
	}
	return &f->packed_fixed;
}

int fanout_record(struct fanout *f, struct fanout_sub *t, const struct rt_record *rec,
		  int32_t pid, const char **what)
{
	struct rt_buf *b;
	int ret;

	if (t->encoding == RINGTAP__ENCODING__RAW ||
	    !rt_subscriber_wants(&t->sub, rec->cpu, rec->type, pid) ||
	    (t->filter && !rt_filter_match(t->filter, rec->type, rec->data, rec->size, rec->cpu)))
		return 0;
	if (!rt_subscriber_has_schema(&t->sub, rec->type) && fanout_push_schema(f, t, rec->event)) {
		rt_subscriber_drop(&t->sub, rec->cpu, 1, rec->timestamp);
		*what = "for a Schema";
		return -ENOMEM;
	}
	/* Alone with its encoding: packed where it goes, not aside and copied. */
	if (t->encoding == RINGTAP__ENCODING__DECODED && t->way->users == 1)
		ret = rt_subscriber_encode(&t->sub, rec, t->way->encoder);
	else if (!(b = packed_for(f, t, rec)))
		ret = -ENOMEM;
	else
		ret = rt_subscriber_add(&t->sub, rec, b->data, b->len);
	if (ret) {
		/* Counted and reported to it like any other drop. */
		rt_subscriber_drop(&t->sub, rec->cpu, 1, rec->timestamp);
		*what = "for a record";
		return -ENOMEM;
	}
	return 0;
}

/*
 * A RAW client's page may hold any event the kernel writes into the
 * instance: those anyone enabled, and ftrace's own (a trace_marker write is
 * ftrace:print, never switched on or off). Every format the layout knows
 * goes out, once, before a page: also those enabled since its last page.
 */
bool fanout_raw_schemas(const struct fanout *f, struct fanout_sub *t)
{
	int n = tep_get_events_count(f->layout->tep);

	/* Events are only ever added: a count that did not change means nothing new. */
	if ((size_t)n == t->raw_schemas)
		return true;
	for (int i = 0; i < n; i++) {
		struct tep_event *ev = tep_get_event(f->layout->tep, i);

		if (ev && !rt_subscriber_has_schema(&t->sub, (unsigned int)ev->id) &&
		    fanout_push_schema(f, t, ev))
			return false;
	}
	t->raw_schemas = (size_t)n;
	return true;
}

/* The frame of the page, made once for every subscriber; false without memory. */
static bool framed(struct fanout_page *p)
{
	if (!p->frame.len && !p->framed)
		p->framed = rt_encode_pages_parts(p->cpu, p->page->data, p->len, p->records,
						  p->first_seq, &p->frame) ?: 1;
	return p->framed > 0;
}

bool fanout_page_overflows(const struct fanout_sub *t, struct fanout_page *p)
{
	const struct rt_subscriber *s = &t->sub;

	if (t->encoding != RINGTAP__ENCODING__RAW || !rt_subscriber_selects_cpu(s, p->cpu) ||
	    !framed(p))
		return false;
	return rt_subscriber_queued_bytes(s) + p->frame.len > rt_subscriber_queue_limit(s);
}

int fanout_page(const struct fanout *f, struct fanout_sub *t, struct fanout_page *p)
{
	if (t->encoding != RINGTAP__ENCODING__RAW || !rt_subscriber_selects_cpu(&t->sub, p->cpu))
		return 0;
	if (!framed(p) || !fanout_raw_schemas(f, t)) {
		rt_subscriber_drop_span(&t->sub, p->cpu, p->records, p->first_ts, p->last_ts);
		return -ENOMEM;
	}
	/* TLS seals each piece of a gather as a record of its own: copied whole. */
	return rt_subscriber_push_page(&t->sub, p->cpu, &p->frame, t->copy_pages ? NULL : p->page,
				       p->records, p->first_ts, p->last_ts);
}
