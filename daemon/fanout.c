// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The fan-out: each decoded record goes to the connections that selected
 * it, encoded once per encoding (DECODED with or without common fields,
 * FIXED) and copied into each queue, or packed straight into the queue of
 * a subscriber alone with its encoding; a raw page goes whole to RAW
 * subscribers; kernel losses go to everyone streaming. Whatever cannot be
 * queued is counted as lost to that subscriber and reported in its stream.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "conn.h"
#include "filter.h"
#include "layout.h"
#include "legacy.h"
#include "log.h"
#include "server.h"
#include "tracefs.h"

int fanout_choose_encoding(struct rt_conn *c)
{
	struct rt_server *srv = c->srv;
	const char *const *only = (const char *const *)c->only;
	struct conn_encoding *w;
	int ret;

	fanout_release_encoding(c);
	if (c->encoding != RINGTAP__ENCODING__DECODED)
		return 0;
	for (w = srv->ways; w; w = w->next)
		if (rt_record_encoder_is(w->encoder, c->common, only))
			break;
	if (!w) {
		w = calloc(1, sizeof(*w));
		if (!w)
			return -ENOMEM;
		ret = rt_record_encoder_new(&w->encoder, srv->layout, c->common, only);
		if (ret) {
			free(w);
			return ret;
		}
		w->next = srv->ways;
		srv->ways = w;
	}
	w->users++;
	c->way = w;
	return 0;
}

void fanout_release_encoding(struct rt_conn *c)
{
	struct conn_encoding *w = c->way;

	c->way = NULL;
	if (!w || --w->users)
		return;
	for (struct conn_encoding **p = &c->srv->ways; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	rt_record_encoder_free(w->encoder);
	rt_buf_free(&w->packed);
	free(w);
}

/* The record as this connection's encoding sends it, encoded once per record and way. */
static struct rt_buf *packed_for(struct rt_server *srv, struct rt_conn *c,
				 const struct rt_record *rec)
{
	struct conn_encoding *w = c->way;
	int n;

	if (c->encoding != RINGTAP__ENCODING__FIXED) {
		if (w->record != srv->records) {
			w->record = srv->records;
			w->packed.len = 0;
			w->failed = rt_record_encoder_put(w->encoder, rec, &w->packed) != 0;
		}
		return w->failed ? NULL : &w->packed;
	}
	if (srv->packed_fixed_record == srv->records)
		return srv->packed_fixed.len ? &srv->packed_fixed : NULL;
	srv->packed_fixed_record = srv->records;
	srv->packed_fixed.len = 0;
	/* A record fits a sub-buffer; its legacy form adds at most a header and alignment. */
	if (!srv->legacy_scratch) {
		srv->legacy_scratch_size = srv->layout->sub_buffer_size + c->legacy->header_size +
					   RT_LEGACY_SLACK;
		srv->legacy_scratch = malloc(srv->legacy_scratch_size);
		if (!srv->legacy_scratch)
			return NULL;
	}
	n = rt_legacy_rewrite(c->legacy, rec, srv->layout, srv->legacy_scratch,
			      srv->legacy_scratch_size);
	if (n < 0 || rt_encode_fixed_record(rec->timestamp, srv->legacy_scratch, (size_t)n,
					    &srv->packed_fixed)) {
		srv->packed_fixed.len = 0;
		return NULL;
	}
	return &srv->packed_fixed;
}

static bool filter_passes(const struct rt_conn *c, const struct rt_record *rec)
{
	return !c->filter || rt_filter_match(c->filter, rec->type, rec->data, rec->size, rec->cpu);
}

void rt_server_record(struct rt_server *srv, const struct rt_record *rec)
{
	const struct rt_field_desc *pidf = srv->layout->common_pid;
	uint64_t pid = 0;

	if (!rec->event)
		return;
	/* A new record: every way's bytes are stale. */
	srv->records++;
	if (pidf)
		rt_record_read_common(rec, srv->layout, pidf, &pid);
	for (struct rt_conn *c = srv->conns; c; c = c->next) {
		struct rt_buf *b;
		int ret;

		if (c->state != CONN_STREAMING || c->encoding == RINGTAP__ENCODING__RAW ||
		    !rt_subscriber_wants(&c->sub, rec->cpu, rec->type, (int32_t)pid) ||
		    !filter_passes(c, rec))
			continue;
		if (!rt_subscriber_has_schema(&c->sub, rec->type) &&
		    conn_push_schema(c, rec->event)) {
			rt_subscriber_drop(&c->sub, rec->cpu, 1, rec->timestamp);
			conn_out_of_memory(c, "for a Schema");
			continue;
		}
		/* Alone with its encoding: packed where it goes, not aside and copied. */
		if (c->encoding == RINGTAP__ENCODING__DECODED && c->way->users == 1)
			ret = rt_subscriber_encode(&c->sub, rec, c->way->encoder);
		else if (!(b = packed_for(srv, c, rec)))
			ret = -ENOMEM;
		else
			ret = rt_subscriber_add(&c->sub, rec, b->data, b->len);
		if (ret) {
			/* Counted and reported to it like any other drop. */
			rt_subscriber_drop(&c->sub, rec->cpu, 1, rec->timestamp);
			conn_out_of_memory(c, "for a record");
		}
	}
}

/*
 * A RAW client's page may hold any event the kernel writes into the
 * instance: those anyone enabled, and ftrace's own (a trace_marker write is
 * ftrace:print, never switched on or off). Every format the layout knows
 * goes out, once, before a page: also those enabled since its last page.
 * false when one could not be queued: the page must not go before it.
 */
static bool raw_schemas_sent(struct rt_server *srv, struct rt_conn *c)
{
	int n = tep_get_events_count(srv->layout->tep);

	/* Events are only ever added: a count that did not change means nothing new. */
	if ((size_t)n == c->raw_schemas)
		return true;
	for (int i = 0; i < n; i++) {
		struct tep_event *ev = tep_get_event(srv->layout->tep, i);

		if (ev && !rt_subscriber_has_schema(&c->sub, (unsigned int)ev->id) &&
		    conn_push_schema(c, ev))
			return false;
	}
	c->raw_schemas = (size_t)n;
	return true;
}

void rt_server_page(struct rt_server *srv, unsigned int cpu, struct rt_page_buf *page,
		    size_t len, unsigned int records, uint64_t first_ts, uint64_t last_ts)
{
	struct rt_frame_parts frame = { 0 };
	int framed = 0;

	for (struct rt_conn *c = srv->conns; c; c = c->next) {
		if (c->state != CONN_STREAMING || c->encoding != RINGTAP__ENCODING__RAW ||
		    !conn_selects_cpu(c, cpu))
			continue;
		if (!frame.len && !framed)
			framed = rt_encode_pages_parts(cpu, page->data, len, records, &frame) ?: 1;
		if (framed < 0 || !raw_schemas_sent(srv, c)) {
			rt_subscriber_drop(&c->sub, cpu, records, first_ts);
			c->sub.lost_queue[cpu < c->sub.ncpus ? cpu : 0].last_ts = last_ts;
			conn_out_of_memory(c, "for a page");
			continue;
		}
		/* TLS seals each piece of a gather as a record of its own: copied whole. */
		if (rt_subscriber_push_page(&c->sub, cpu, &frame, c->tls ? NULL : page, records,
					    first_ts, last_ts))
			conn_out_of_memory(c, "for a page");
		if (c->sub.head)
			c->write_due = true;
	}
}

void rt_server_kernel_loss(struct rt_server *srv, unsigned int cpu, uint64_t count, bool exact,
			   uint64_t after_ts, uint64_t before_ts)
{
	for (struct rt_conn *c = srv->conns; c; c = c->next)
		if (c->state == CONN_STREAMING)
			rt_subscriber_kernel_loss(&c->sub, cpu, count, exact, after_ts, before_ts);
}

void rt_server_end_page(struct rt_server *srv)
{
	struct rt_conn *next;

	for (struct rt_conn *c = srv->conns; c; c = next) {
		next = c->next;
		if (c->state != CONN_STREAMING)
			continue;
		/* A batch that cannot be queued is counted lost by the subscriber. */
		if (rt_subscriber_end_page(&c->sub))
			conn_out_of_memory(c, "for a batch");
		if (c->sub.head)
			c->write_due = true;
		/*
		 * Half its queue filled within one pass (a long period, many CPUs):
		 * out as far as the socket takes it now, not when the pass ends,
		 * so that the pass's own pages do not overflow it. A socket that
		 * took little is tried again once an eighth more is queued, not
		 * at every page.
		 */
		if (c->write_due && c->sub.queued > c->sub.max_queued / 2 &&
		    c->sub.queued >= c->early_write_at && conn_write(c))
			c->early_write_at = c->sub.queued + c->sub.max_queued / 8;
	}
}

void rt_server_cpu_state(struct rt_server *srv, unsigned int cpu, bool online)
{
	for (struct rt_conn *c = srv->conns; c; c = c->next) {
		struct rt_buf b = { 0 };

		if (c->state != CONN_STREAMING || !conn_selects_cpu(c, cpu))
			continue;
		if (rt_encode_cpu_state_frame(cpu, online, &b) || conn_push(c, &b)) {
			rt_buf_free(&b);
			/* Its stream would not say the CPU changed: it ends, with an Error if it can. */
			conn_send_error(c, ENOMEM, "out of memory for a CpuState");
		}
	}
}

void rt_server_abandon(struct rt_server *srv)
{
	for (struct rt_conn *c = srv->conns; c; c = c->next) {
		if (!c->sub.head)
			continue;
		if (rt_subscriber_abandon(&c->sub))
			conn_out_of_memory(c, "for its loss reports");
		c->said_bye = false;	/* a queued Bye went with the rest */
		rt_log(LOG_WARNING, "client %s (pid %d): too slow to take its queue before the stop; "
		       "%llu records dropped in all, reported in its stream", c->name, (int)c->pid,
		       (unsigned long long)c->sub.dropped);
		conn_want_write(c, true);
	}
}

void rt_server_say_bye(struct rt_server *srv)
{
	for (struct rt_conn *c = srv->conns; c; c = c->next) {
		struct rt_buf b = { 0 };

		if (c->state != CONN_STREAMING || c->said_bye)
			continue;
		if (rt_encode_bye_frame(&b) || conn_push(c, &b))
			rt_buf_free(&b);
		else
			c->said_bye = true;
	}
}

bool rt_server_drained(struct rt_server *srv)
{
	for (struct rt_conn *c = srv->conns; c; c = c->next)
		if (c->sub.head)
			return false;
	return true;
}

bool rt_server_wants_records(const struct rt_server *srv)
{
	for (const struct rt_conn *c = srv->conns; c; c = c->next)
		if (c->state == CONN_STREAMING && c->encoding != RINGTAP__ENCODING__RAW)
			return true;
	return false;
}
