// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consumer.h"
#include "wire.h"

int rt_consumer_fail(struct rt_consumer *c, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->errtext, sizeof(c->errtext), fmt, ap);
	va_end(ap);
	c->error = err;
	return err;
}

static struct schema_slot *find_schema(const struct rt_consumer *c, uint32_t event_id)
{
	size_t lo = 0, hi = c->n_schemas;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->schemas[mid].event_id == event_id)
			return &c->schemas[mid];
		if (c->schemas[mid].event_id < event_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Takes the Schema frame f into the table; frees it on failure. */
static int add_schema(struct rt_consumer *c, Ringtap__Frame *f)
{
	uint32_t id = f->schema->event_id;
	size_t pos = c->n_schemas;

	/* PROTOCOL.md: once per event and connection; a second one is a daemon bug. */
	if (find_schema(c, id)) {
		ringtap__frame__free_unpacked(f, NULL);
		return rt_consumer_fail(c, -EPROTO, "a second Schema for event id %" PRIu32, id);
	}
	if (c->n_schemas == c->schemas_alloc) {
		size_t n = c->schemas_alloc ? c->schemas_alloc * 2 : 16;
		struct schema_slot *s = realloc(c->schemas, n * sizeof(*s));

		if (!s) {
			ringtap__frame__free_unpacked(f, NULL);
			return rt_consumer_fail(c, -ENOMEM, "no memory for a Schema");
		}
		c->schemas = s;
		c->schemas_alloc = n;
	}
	while (pos > 0 && c->schemas[pos - 1].event_id > id)
		pos--;
	memmove(&c->schemas[pos + 1], &c->schemas[pos],
		(c->n_schemas - pos) * sizeof(*c->schemas));
	c->schemas[pos].event_id = id;
	c->schemas[pos].frame = f;
	c->n_schemas++;
	return 0;
}

static void drop_current(struct rt_consumer *c)
{
	if (c->cur)
		ringtap__frame__free_unpacked(c->cur, NULL);
	c->cur = NULL;
	c->batch_next = 0;
	c->in_place = RINGTAP__FRAME__MSG__NOT_SET;
}

static int check_cpu(struct rt_consumer *c, uint32_t cpu, const char *what)
{
	if (cpu < c->welcome->welcome->cpus)
		return 0;
	return rt_consumer_fail(c, -EPROTO, "%s for cpu %" PRIu32 ", the Welcome said %" PRIu32 " CPUs", what,
		    cpu, c->welcome->welcome->cpus);
}

/* The next record of the Batch in cur as an event; 0 when there is none left. */
/* What the daemon promises of a Record: its Schema came first, and its values fit it. */
static int check_record(struct rt_consumer *c, uint32_t event_id, size_t n_fields,
			size_t n_common, const Ringtap__Schema **out)
{
	const struct schema_slot *s = find_schema(c, event_id);
	const Ringtap__Schema *schema;

	if (!s)
		return rt_consumer_fail(c, -EPROTO, "a Record of event id %" PRIu32 " before its "
					"Schema", event_id);
	schema = s->frame->schema;
	if (n_fields != schema->n_fields)
		return rt_consumer_fail(c, -EPROTO, "a Record of %s:%s with %zu values for %zu "
					"fields", schema->system, schema->name, n_fields,
					schema->n_fields);
	if (n_common > c->welcome->welcome->layout->n_common_fields)
		return rt_consumer_fail(c, -EPROTO, "a Record with %zu common values for %zu common "
					"fields", n_common,
					c->welcome->welcome->layout->n_common_fields);
	*out = schema;
	return 0;
}

static int next_record(struct rt_consumer *c, struct ringtap_event *ev)
{
	const Ringtap__Batch *b = c->cur->batch;
	const Ringtap__Record *r;
	int ret;

	if (c->batch_next >= b->n_records)
		return 0;
	r = b->records[c->batch_next++];
	ret = check_record(c, r->event_id, r->n_fields, r->n_common, &ev->schema);
	if (ret)
		return ret;
	ev->kind = RINGTAP_RECORD;
	ev->cpu = b->cpu;
	ev->record = r;
	return 1;
}

/* The next record of a Batch read in place; 0 after the last. */
static int next_in_place(struct rt_consumer *c, struct ringtap_event *ev)
{
	int ret;

	for (;;) {
		ret = rt_batch_view_next(&c->batch, &c->view, c->vals, c->n_vals);
		if (ret != -ENOSPC)
			break;
		/* A record with more values than ever before: room for twice as many. */
		size_t n = c->n_vals ? 2 * c->n_vals : 64;
		struct rt_value *grown = realloc(c->vals, n * sizeof(*grown));

		if (!grown || n > (1u << 20))
			return rt_consumer_fail(c, -ENOMEM, "no memory for a record's values");
		c->vals = grown;
		c->n_vals = n;
	}
	if (ret < 0)
		return rt_consumer_fail(c, -EBADMSG, "a Batch record that does not parse");
	if (ret == 0)
		return 0;
	ret = check_record(c, c->view.event_id, c->view.n_fields, c->view.n_common, &ev->schema);
	if (ret)
		return ret;
	ev->kind = RINGTAP_RECORD;
	ev->cpu = c->batch.cpu;
	ev->record = NULL;
	return 1;
}

/* The next page of a Pages read in place; 0 after the last. */
static int next_page_in_place(struct rt_consumer *c, struct ringtap_event *ev)
{
	const uint8_t *page;
	uint32_t records;
	size_t len;
	int ret = rt_pages_view_next(&c->pages, &page, &len, &records);

	if (ret < 0)
		return rt_consumer_fail(c, -EBADMSG, "a Pages that does not parse");
	if (ret == 0)
		return 0;
	c->page.data = (uint8_t *)page;
	c->page.len = len;
	ev->kind = RINGTAP_PAGE;
	ev->cpu = c->pages.cpu;
	ev->page_records = records;
	ev->page = &c->page;
	return 1;
}

/* Frames whose items are given one event each. */
static bool holds_many(const Ringtap__Frame *f)
{
	return f->msg_case == RINGTAP__FRAME__MSG_BATCH || f->msg_case == RINGTAP__FRAME__MSG_FIXED ||
	       f->msg_case == RINGTAP__FRAME__MSG_PAGES;
}

/* The next item of the frame in cur as an event; 0 when there is none left. */
static int next_item(struct rt_consumer *c, struct ringtap_event *ev)
{
	const Ringtap__Frame *f = c->cur;

	if (c->in_place == RINGTAP__FRAME__MSG_PAGES)
		return next_page_in_place(c, ev);
	if (c->in_place == RINGTAP__FRAME__MSG_BATCH)
		return next_in_place(c, ev);
	switch (f->msg_case) {
	case RINGTAP__FRAME__MSG_FIXED:
		if (c->batch_next >= f->fixed->n_records)
			return 0;
		ev->kind = RINGTAP_FIXED;
		ev->cpu = f->fixed->cpu;
		ev->fixed = f->fixed->records[c->batch_next++];
		return 1;
	case RINGTAP__FRAME__MSG_PAGES:
		if (c->batch_next >= f->pages->n_pages)
			return 0;
		ev->kind = RINGTAP_PAGE;
		ev->cpu = f->pages->cpu;
		/* A daemon before Pages.records counted nothing: 0. */
		ev->page_records = c->batch_next < f->pages->n_records ?
					   f->pages->records[c->batch_next] : 0;
		ev->page = &f->pages->pages[c->batch_next++];
		return 1;
	default:
		return next_record(c, ev);
	}
}

int rt_consumer_take(struct rt_consumer *c, Ringtap__Frame *f, struct ringtap_event *ev)
{
	int ret = 0;

	/* The last frame is done with, even when no rt_consumer_next said so (an empty one). */
	drop_current(c);
	switch (f->msg_case) {
	case RINGTAP__FRAME__MSG_SCHEMA:
		return add_schema(c, f);
	case RINGTAP__FRAME__MSG_BATCH:
		ret = check_cpu(c, f->batch->cpu, "a Batch");
		break;
	case RINGTAP__FRAME__MSG_FIXED:
		ret = check_cpu(c, f->fixed->cpu, "a Fixed");
		break;
	case RINGTAP__FRAME__MSG_PAGES:
		ret = check_cpu(c, f->pages->cpu, "a Pages");
		break;
	case RINGTAP__FRAME__MSG_LOST:
		ret = check_cpu(c, f->lost->cpu, "a Lost");
		ev->kind = RINGTAP_LOST;
		ev->cpu = f->lost->cpu;
		ev->lost = f->lost;
		break;
	case RINGTAP__FRAME__MSG_HEARTBEAT:
		ev->kind = RINGTAP_HEARTBEAT;
		ev->heartbeat = f->heartbeat;
		break;
	case RINGTAP__FRAME__MSG_ERROR:
		ev->kind = RINGTAP_ERROR_FRAME;
		ev->error = f->error;
		break;
	case RINGTAP__FRAME__MSG_BYE:
		ringtap__frame__free_unpacked(f, NULL);
		return rt_consumer_end(c, true, ev);
	case RINGTAP__FRAME__MSG_CPU_STATE:
		ret = check_cpu(c, f->cpu_state->cpu, "a CpuState");
		ev->kind = RINGTAP_CPU_STATE;
		ev->cpu = f->cpu_state->cpu;
		ev->cpu_state = f->cpu_state;
		break;
	case RINGTAP__FRAME__MSG_HOST_TEXTS:
		/* For the tap (a trace.dat writer); nothing to hand out. */
		ringtap__frame__free_unpacked(f, NULL);
		return 0;
	default:
		ret = rt_consumer_fail(c, -EPROTO, "an unexpected %s frame", rt_wire_frame_name(f));
		break;
	}
	if (ret < 0) {
		ringtap__frame__free_unpacked(f, NULL);
		return ret;
	}
	c->cur = f;
	if (holds_many(f))
		return next_item(c, ev);
	return 1;
}


int rt_consumer_welcome(struct rt_consumer *c, Ringtap__Frame *f, uint32_t version,
			Ringtap__Encoding encoding)
{
	const Ringtap__Welcome *w = f->welcome;

	if (f->msg_case != RINGTAP__FRAME__MSG_WELCOME)
		return rt_consumer_fail(c, -EPROTO, "ringtapd answered the Hello with a %s frame",
					rt_wire_frame_name(f));
	if (w->version != version || w->encoding != encoding) {
		const ProtobufCEnumValue *v =
			protobuf_c_enum_descriptor_get_value(&ringtap__encoding__descriptor,
							     (int)w->encoding);

		return rt_consumer_fail(c, -EPROTO, "ringtapd chose version %" PRIu32 " and "
					"encoding %s, which were not offered", w->version,
					v ? v->name : "unknown");
	}
	if (!w->cpus || w->cpus > RT_CONSUMER_MAX_CPUS)
		return rt_consumer_fail(c, -EPROTO, "a Welcome for %" PRIu32 " CPUs", w->cpus);
	c->welcome = f;
	return 0;
}

int rt_consumer_next(struct rt_consumer *c, struct ringtap_event *ev)
{
	int ret;

	memset(ev, 0, sizeof(*ev));
	if (c->error)
		return c->error;
	if (c->end) {
		ev->kind = RINGTAP_END;
		ev->end_clean = c->said_bye;
		return 1;
	}
	if (c->in_place || (c->cur && holds_many(c->cur))) {
		ret = next_item(c, ev);
		if (ret)
			return ret;
	}
	drop_current(c);
	return 0;
}

int rt_consumer_take_in_place(struct rt_consumer *c, const uint8_t *payload, size_t len,
			      struct ringtap_event *ev)
{
	const uint8_t *msg;
	const char *what;
	uint32_t number;
	size_t msg_len;
	bool pages;
	int ret = rt_view_frame_message(payload, len, &number, &msg, &msg_len);

	if (ret < 0)
		return rt_consumer_fail(c, -EBADMSG, "a frame that does not parse");
	if (ret == 0 ||
	    (number != RINGTAP__FRAME__MSG_BATCH && number != RINGTAP__FRAME__MSG_PAGES))
		return -ENOMSG;
	pages = number == RINGTAP__FRAME__MSG_PAGES;
	what = pages ? "a Pages" : "a Batch";
	drop_current(c);
	if (pages ? rt_pages_view_open(&c->pages, msg, msg_len) :
		    rt_batch_view_open(&c->batch, msg, msg_len))
		return rt_consumer_fail(c, -EBADMSG, "%s that does not parse", what);
	ret = check_cpu(c, pages ? c->pages.cpu : c->batch.cpu, what);
	if (ret)
		return ret;
	c->in_place = (Ringtap__Frame__MsgCase)number;
	return next_item(c, ev);
}

int rt_consumer_end(struct rt_consumer *c, bool clean, struct ringtap_event *ev)
{
	c->end = true;
	c->said_bye = clean;
	ev->kind = RINGTAP_END;
	ev->end_clean = clean;
	return 1;
}

const Ringtap__Schema *rt_consumer_find_schema(const struct rt_consumer *c, const char *system,
					       const char *name)
{
	for (size_t i = 0; i < c->n_schemas; i++) {
		const Ringtap__Schema *s = c->schemas[i].frame->schema;

		if (!strcmp(s->system, system) && !strcmp(s->name, name))
			return s;
	}
	return NULL;
}

void rt_consumer_release(struct rt_consumer *c)
{
	drop_current(c);
	for (size_t i = 0; i < c->n_schemas; i++)
		ringtap__frame__free_unpacked(c->schemas[i].frame, NULL);
	free(c->schemas);
	if (c->welcome)
		ringtap__frame__free_unpacked(c->welcome, NULL);
	free(c->vals);
	memset(c, 0, sizeof(*c));
}
