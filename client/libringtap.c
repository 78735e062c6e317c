// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ringtap.h"
#include "transport.h"
#include "util.h"
#include "wire.h"

#define DEFAULT_TIMEOUT_MS	5000
/* PROTOCOL.md: the daemon refuses client frames over 64 KiB. */
#define HELLO_MAX		(64u << 10)
#define READ_CHUNK		(64u << 10)

struct schema_slot {
	uint32_t event_id;
	Ringtap__Frame *frame;	/* owns the Schema */
};

struct ringtap_client {
	struct rt_transport t;
	struct rt_wire_reader reader;
	uint8_t *rbuf;		/* bytes read from the socket, fed from rpos */
	size_t rpos, rlen;
	Ringtap__Frame *welcome;
	struct schema_slot *schemas;	/* sorted by event_id */
	size_t n_schemas, schemas_alloc;
	Ringtap__Frame *cur;	/* the frame the last event points into */
	size_t batch_next;	/* with a Batch in cur: the next record to give */
	int error;		/* once set, every ringtap_next() returns it */
	Ringtap__Encoding encoding;	/* the one asked for, the only one offered */
	void (*tap)(void *ctx, const uint8_t *frame, size_t len);
	void *tap_ctx;
	bool end;
	bool said_bye;		/* the daemon ended the stream with a Bye: nothing unreported */
	char errtext[256];
};

/*
 * Called per frame: the coarse clock is read from memory, where a guest
 * without a stable TSC pays a trip to the HPET (a tenth of a recorder's CPU).
 * Deadlines are whole milliseconds and poll() rounds up: ticks suffice.
 */
static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* -1: no deadline. */
static int64_t deadline_after(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : now_ns() + (int64_t)timeout_ms * 1000000;
}

/* What is left of the deadline as a poll() timeout, rounded up so poll does not spin. */
static int remaining_ms(int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return -1;
	left = deadline - now_ns();
	if (left <= 0)
		return 0;
	left = (left + 999999) / 1000000;
	return left > INT32_MAX ? INT32_MAX : (int)left;
}

static const char *frame_name(const Ringtap__Frame *f)
{
	const ProtobufCFieldDescriptor *d =
		protobuf_c_message_descriptor_get_field(&ringtap__frame__descriptor,
							(unsigned int)f->msg_case);

	return d ? d->name : "unknown";
}

static const char *enum_name(const ProtobufCEnumDescriptor *d, int value)
{
	const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(d, value);

	return v ? v->name : "unknown";
}

static int fail(struct ringtap_client *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Makes err the client's sticky error, with a text for ringtap_error_text(). */
static int fail(struct ringtap_client *c, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->errtext, sizeof(c->errtext), fmt, ap);
	va_end(ap);
	c->error = err;
	return err;
}

/*
 * Reads what the socket has into rbuf, once every fed byte is taken.
 * Returns the number of bytes, 0 at end of stream, -EAGAIN, or -errno.
 */
static int read_some(struct ringtap_client *c)
{
	ssize_t n;

	if (c->rpos < c->rlen)
		return (int)(c->rlen - c->rpos);
	c->rpos = c->rlen = 0;
	n = rt_transport_read(&c->t, c->rbuf, READ_CHUNK);
	if (n < 0)
		return (int)n;
	c->rlen = (size_t)n;
	return (int)n;
}

/* The frame as it came, length first: neither packed again nor copied. */
static void tap_frame(struct ringtap_client *c)
{
	size_t len;
	const uint8_t *frame = rt_wire_reader_last(&c->reader, &len);

	if (frame)
		c->tap(c->tap_ctx, frame, len);
}

/*
 * The next whole frame from the bytes already read: 1 and the frame, 0 when
 * more bytes are needed, or -errno with the client's error set.
 */
static int buffered_frame(struct ringtap_client *c, Ringtap__Frame **f)
{
	int ret;

	for (;;) {
		size_t used;

		ret = rt_wire_reader_next(&c->reader, f);
		if (ret == 0 && c->rpos < c->rlen) {
			ret = rt_wire_reader_feed(&c->reader, c->rbuf + c->rpos, c->rlen - c->rpos,
						  &used);
			c->rpos += used;
			if (ret >= 0)
				continue;
		}
		if (ret == 1 && c->tap)
			tap_frame(c);
		if (ret >= 0)
			return ret;
		/* Too long is as malformed as unparsable for the caller. */
		return fail(c, ret == -ENOMEM ? ret : -EBADMSG, "%s: %s", rt_wire_strerror(ret),
			    c->reader.why ? c->reader.why : "no details");
	}
}

/*
 * Waits for a whole frame until the deadline. Returns 1 and the frame, or
 * 1 and NULL when the daemon closed the connection between frames, 0 at the
 * deadline, -EINTR, or -errno with the client's error set.
 */
static int wait_frame(struct ringtap_client *c, Ringtap__Frame **f, int64_t deadline)
{
	for (;;) {
		struct pollfd pfd = { .fd = c->t.fd };
		int ret = buffered_frame(c, f);

		if (ret)
			return ret;
		ret = read_some(c);
		if (ret > 0)
			continue;
		if (ret == 0) {
			if (c->reader.have_len || c->reader.len_bytes)
				return fail(c, -EBADMSG, "connection closed inside a frame");
			*f = NULL;
			return 1;
		}
		if (ret != -EAGAIN)
			return fail(c, ret, "reading from ringtapd: %s", c->t.error);
		pfd.events = rt_transport_poll_events(&c->t);
		ret = poll(&pfd, 1, remaining_ms(deadline));
		if (ret < 0 && errno == EINTR)
			return -EINTR;
		if (ret < 0)
			return fail(c, -errno, "poll: %s", strerror(errno));
		if (ret == 0)
			return 0;
	}
}

static int send_all(struct ringtap_client *c, const uint8_t *p, size_t len, int64_t deadline)
{
	while (len) {
		struct pollfd pfd = { .fd = c->t.fd };
		ssize_t n = rt_transport_write(&c->t, p, len);
		int ret;

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n != -EAGAIN)
			return n ? (int)n : -EPIPE;
		pfd.events = rt_transport_poll_events(&c->t);
		ret = poll(&pfd, 1, remaining_ms(deadline));
		if (ret < 0 && errno != EINTR)
			return -errno;
		if (ret == 0)
			return -ETIMEDOUT;
	}
	return 0;
}

static struct schema_slot *find_schema(const struct ringtap_client *c, uint32_t event_id)
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
static int add_schema(struct ringtap_client *c, Ringtap__Frame *f)
{
	uint32_t id = f->schema->event_id;
	size_t pos = c->n_schemas;

	/* PROTOCOL.md: once per event and connection; a second one is a daemon bug. */
	if (find_schema(c, id)) {
		ringtap__frame__free_unpacked(f, NULL);
		return fail(c, -EPROTO, "a second Schema for event id %" PRIu32, id);
	}
	if (c->n_schemas == c->schemas_alloc) {
		size_t n = c->schemas_alloc ? c->schemas_alloc * 2 : 16;
		struct schema_slot *s = realloc(c->schemas, n * sizeof(*s));

		if (!s) {
			ringtap__frame__free_unpacked(f, NULL);
			return fail(c, -ENOMEM, "no memory for a Schema");
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

static void drop_current(struct ringtap_client *c)
{
	if (c->cur)
		ringtap__frame__free_unpacked(c->cur, NULL);
	c->cur = NULL;
	c->batch_next = 0;
}

static int check_cpu(struct ringtap_client *c, uint32_t cpu, const char *what)
{
	if (cpu < c->welcome->welcome->cpus)
		return 0;
	return fail(c, -EPROTO, "%s for cpu %" PRIu32 ", the Welcome said %" PRIu32 " CPUs", what,
		    cpu, c->welcome->welcome->cpus);
}

/* The next record of the Batch in cur as an event; 0 when there is none left. */
static int next_record(struct ringtap_client *c, struct ringtap_event *ev)
{
	const Ringtap__Batch *b = c->cur->batch;
	const Ringtap__Record *r;
	const struct schema_slot *s;
	const Ringtap__Schema *schema;
	size_t n_common = c->welcome->welcome->layout->n_common_fields;

	if (c->batch_next >= b->n_records)
		return 0;
	r = b->records[c->batch_next++];
	s = find_schema(c, r->event_id);
	if (!s)
		return fail(c, -EPROTO, "a Record of event id %" PRIu32 " before its Schema",
			    r->event_id);
	schema = s->frame->schema;
	if (r->n_fields != schema->n_fields)
		return fail(c, -EPROTO, "a Record of %s:%s with %zu values for %zu fields",
			    schema->system, schema->name, r->n_fields, schema->n_fields);
	if (r->n_common > n_common)
		return fail(c, -EPROTO, "a Record with %zu common values for %zu common fields",
			    r->n_common, n_common);
	ev->kind = RINGTAP_RECORD;
	ev->cpu = b->cpu;
	ev->record = r;
	ev->schema = schema;
	return 1;
}

/* Frames whose items are given one event each. */
static bool holds_many(const Ringtap__Frame *f)
{
	return f->msg_case == RINGTAP__FRAME__MSG_BATCH || f->msg_case == RINGTAP__FRAME__MSG_FIXED ||
	       f->msg_case == RINGTAP__FRAME__MSG_PAGES;
}

/* The next item of the frame in cur as an event; 0 when there is none left. */
static int next_item(struct ringtap_client *c, struct ringtap_event *ev)
{
	const Ringtap__Frame *f = c->cur;

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

/*
 * Acts on one frame after the Welcome. Returns 1 with an event (f is then
 * cur, or freed), 0 when the frame gave none (it was kept or freed), or
 * -errno with the client's error set (f freed).
 */
static int take_frame(struct ringtap_client *c, Ringtap__Frame *f, struct ringtap_event *ev)
{
	int ret = 0;

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
		c->end = true;
		c->said_bye = true;
		ev->kind = RINGTAP_END;
		ev->end_clean = true;
		return 1;
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
		ret = fail(c, -EPROTO, "an unexpected %s frame", frame_name(f));
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

int ringtap_next(struct ringtap_client *c, struct ringtap_event *ev, int timeout_ms)
{
	int64_t deadline = deadline_after(timeout_ms);
	int ret;

	memset(ev, 0, sizeof(*ev));
	if (c->error)
		return c->error;
	if (c->end) {
		ev->kind = RINGTAP_END;
		ev->end_clean = c->said_bye;
		return 1;
	}
	if (c->cur && holds_many(c->cur)) {
		ret = next_item(c, ev);
		if (ret)
			return ret;
	}
	drop_current(c);
	for (;;) {
		Ringtap__Frame *f;

		ret = wait_frame(c, &f, deadline);
		if (ret <= 0)
			return ret;
		if (!f) {
			c->end = true;
			ev->kind = RINGTAP_END;
			return 1;
		}
		ret = take_frame(c, f, ev);
		if (ret)
			return ret;
		/* A Schema, or an empty Batch: nothing to give yet. */
		drop_current(c);
	}
}

const char *ringtap_error_text(const struct ringtap_client *c)
{
	return c->errtext;
}

const Ringtap__Schema *ringtap_find_schema(const struct ringtap_client *c, const char *system,
					   const char *name)
{
	for (size_t i = 0; i < c->n_schemas; i++) {
		const Ringtap__Schema *s = c->schemas[i].frame->schema;

		if (!strcmp(s->system, system) && !strcmp(s->name, name))
			return s;
	}
	return NULL;
}

int ringtap_fd(const struct ringtap_client *c)
{
	return c->t.fd;
}

const Ringtap__Welcome *ringtap_welcome(const struct ringtap_client *c)
{
	return c->welcome->welcome;
}

static void send_bye(struct ringtap_client *c)
{
	Ringtap__Frame frame = RINGTAP__FRAME__INIT;
	Ringtap__Bye bye = RINGTAP__BYE__INIT;
	uint8_t *bytes;
	size_t len;

	frame.msg_case = RINGTAP__FRAME__MSG_BYE;
	frame.bye = &bye;
	if (rt_wire_encode(&frame, &bytes, &len))
		return;
	/* Best effort: a daemon that is gone or not reading does not hold up close. */
	(void)rt_transport_write(&c->t, bytes, len);
	free(bytes);
}

void ringtap_close(struct ringtap_client *c)
{
	if (!c)
		return;
	if (c->t.fd >= 0)
		send_bye(c);
	rt_transport_close(&c->t);
	drop_current(c);
	for (size_t i = 0; i < c->n_schemas; i++)
		ringtap__frame__free_unpacked(c->schemas[i].frame, NULL);
	free(c->schemas);
	if (c->welcome)
		ringtap__frame__free_unpacked(c->welcome, NULL);
	rt_wire_reader_release(&c->reader);
	free(c->rbuf);
	free(c);
}

static int set_err(struct ringtap_connect_error *err, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int set_err(struct ringtap_connect_error *err, int ret, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return ret;
	va_start(ap, fmt);
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
	va_end(ap);
	return ret;
}

static int refusal_errno(Ringtap__RefusalReason reason)
{
	switch (reason) {
	case RINGTAP__REFUSAL_REASON__NO_COMMON_VERSION:
		return -EPROTONOSUPPORT;
	case RINGTAP__REFUSAL_REASON__NO_ACCEPTABLE_ENCODING:
		return -ENOPROTOOPT;
	case RINGTAP__REFUSAL_REASON__UNKNOWN_EVENT:
		return -ENOENT;
	case RINGTAP__REFUSAL_REASON__NOT_AUTHORIZED:
		return -EACCES;
	case RINGTAP__REFUSAL_REASON__BAD_SUBSCRIPTION:
		return -EINVAL;
	default:
		return -ECONNREFUSED;
	}
}

/* The subscription the options describe; false when they name no event. */
static bool fill_subscription(const struct ringtap_client_opts *o, Ringtap__Subscription *sub)
{
	size_t n_events = 0;

	while (o->events && o->events[n_events])
		n_events++;
	if (!n_events)
		return false;
	sub->n_events = n_events;
	sub->events = (char **)o->events;
	sub->n_cpus = o->n_cpus;
	sub->cpus = (uint32_t *)o->cpus;
	sub->n_pids = o->n_pids;
	sub->pids = (int32_t *)o->pids;
	sub->fixed_layout = (char *)o->fixed_layout;
	sub->filter = (char *)o->filter;
	while (o->fields && o->fields[sub->n_fields])
		sub->n_fields++;
	sub->fields = (char **)o->fields;
	sub->has_common_fields = o->common_fields;
	sub->common_fields = o->common_fields;
	sub->has_host_texts = o->host_texts;
	sub->host_texts = o->host_texts;
	return true;
}

int ringtap_update(struct ringtap_client *c, const struct ringtap_client_opts *o)
{
	Ringtap__Frame frame = RINGTAP__FRAME__INIT;
	Ringtap__Update update = RINGTAP__UPDATE__INIT;
	Ringtap__Subscription sub = RINGTAP__SUBSCRIPTION__INIT;
	_cleanup_free_ uint8_t *bytes = NULL;
	size_t len;
	int ret;

	if (c->error)
		return c->error;
	if (!fill_subscription(o, &sub))
		return -EINVAL;
	update.subscription = &sub;
	frame.msg_case = RINGTAP__FRAME__MSG_UPDATE;
	frame.update = &update;
	ret = rt_wire_encode(&frame, &bytes, &len);
	if (!ret && len > HELLO_MAX)
		ret = -EMSGSIZE;
	return ret ?: send_all(c, bytes, len, deadline_after(DEFAULT_TIMEOUT_MS));
}

static int send_hello(struct ringtap_client *c, const struct ringtap_client_opts *o,
		      int64_t deadline, struct ringtap_connect_error *err)
{
	Ringtap__Encoding encodings[] = { c->encoding };
	Ringtap__Frame frame = RINGTAP__FRAME__INIT;
	Ringtap__Hello hello = RINGTAP__HELLO__INIT;
	Ringtap__Subscription sub = RINGTAP__SUBSCRIPTION__INIT;
	_cleanup_free_ uint8_t *bytes = NULL;
	size_t len;
	int ret;

	hello.min_version = RINGTAP_PROTOCOL_VERSION;
	hello.max_version = RINGTAP_PROTOCOL_VERSION;
	hello.n_encodings = ARRAY_SIZE(encodings);
	hello.encodings = encodings;
	hello.client_name = (char *)(o->client_name ? o->client_name : "libringtap");
	if (fill_subscription(o, &sub))
		hello.subscription = &sub;
	frame.msg_case = RINGTAP__FRAME__MSG_HELLO;
	frame.hello = &hello;
	ret = rt_wire_encode(&frame, &bytes, &len);
	if (ret == 0 && len > HELLO_MAX)
		ret = -EMSGSIZE;
	if (ret == -EMSGSIZE)
		return set_err(err, ret, "the Hello would be over the daemon's 64 KiB limit");
	if (ret)
		return set_err(err, ret, "cannot make the Hello: %s", strerror(-ret));
	ret = send_all(c, bytes, len, deadline);
	if (ret)
		return set_err(err, ret, "sending the Hello: %s", strerror(-ret));
	return 0;
}

/* Waits for Welcome or Refusal; 0 with c->welcome set, or -errno with err. */
static int read_answer(struct ringtap_client *c, const char *path, int timeout_ms, int64_t deadline,
		       struct ringtap_connect_error *err)
{
	Ringtap__Frame *f = NULL;
	int ret;

	do
		ret = wait_frame(c, &f, deadline);
	while (ret == -EINTR);
	if (ret == 0)
		return set_err(err, -ETIMEDOUT, "no answer from %s within %d ms", path, timeout_ms);
	if (ret < 0)
		return set_err(err, ret, "%s: %s", path, c->errtext);
	if (!f)
		return set_err(err, -ECONNRESET, "%s closed the connection without an answer",
			       path);
	switch (f->msg_case) {
	case RINGTAP__FRAME__MSG_WELCOME:
		if (f->welcome->version != RINGTAP_PROTOCOL_VERSION ||
		    f->welcome->encoding != c->encoding) {
			ret = set_err(err, -EPROTO, "ringtapd chose version %" PRIu32
				      " and encoding %s, which were not offered",
				      f->welcome->version,
				      enum_name(&ringtap__encoding__descriptor,
						f->welcome->encoding));
			break;
		}
		c->welcome = f;
		return 0;
	case RINGTAP__FRAME__MSG_REFUSAL:
		ret = refusal_errno(f->refusal->reason);
		if (err)
			err->refusal = f->refusal->reason;
		set_err(err, ret, "ringtapd refused the connection (%s): %s",
			enum_name(&ringtap__refusal_reason__descriptor, f->refusal->reason),
			f->refusal->text ? f->refusal->text : "no reason given");
		break;
	case RINGTAP__FRAME__MSG_ERROR:
		/* The daemon could not make sense of the Hello. */
		ret = f->error->code > 0 && f->error->code < 4096 ? -(int)f->error->code : -EPROTO;
		set_err(err, ret, "ringtapd: %s (%s)", f->error->text, strerror(-ret));
		break;
	default:
		ret = set_err(err, -EPROTO, "ringtapd answered the Hello with a %s frame",
			      frame_name(f));
		break;
	}
	ringtap__frame__free_unpacked(f, NULL);
	return ret;
}

int ringtap_connect(struct ringtap_client **out, const struct ringtap_client_opts *opts,
		    struct ringtap_connect_error *err)
{
	static const struct ringtap_client_opts defaults;
	const struct ringtap_client_opts *o = opts ? opts : &defaults;
	const char *path = o->socket_path ? o->socket_path : RINGTAP_DEFAULT_SOCKET;
	int timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : DEFAULT_TIMEOUT_MS;
	int64_t deadline = deadline_after(timeout_ms);
	const struct rt_transport_tls tls = { o->tls_ca, o->tls_cert, o->tls_key, o->tls_server_name };
	struct ringtap_client *c;
	int ret;

	*out = NULL;
	if (err) {
		err->refusal = 0;
		err->text[0] = '\0';
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->rbuf = malloc(READ_CHUNK))) {
		free(c);
		return set_err(err, -ENOMEM, "out of memory");
	}
	rt_wire_reader_init(&c->reader, RT_WIRE_MAX_FRAME_DEFAULT);
	c->encoding = o->encoding ? o->encoding : RINGTAP__ENCODING__DECODED;
	c->tap = o->tap;
	c->tap_ctx = o->tap_ctx;
	c->t.fd = -1;
	ret = rt_transport_open(&c->t, path, &tls, timeout_ms);
	if (ret) {
		set_err(err, ret, "%s", c->t.error);
		goto fail;
	}
	ret = send_hello(c, o, deadline, err);
	if (!ret)
		ret = read_answer(c, path, timeout_ms, deadline, err);
	if (ret)
		goto fail;
	*out = c;
	return 0;
fail:
	rt_transport_close(&c->t);
	ringtap_close(c);
	return ret;
}

/* Formatting: an snprintf-like sink that counts what did not fit. */
struct sink {
	char *buf;
	size_t size;
	size_t len;
};

static void put(struct sink *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct sink *s, const char *fmt, ...)
{
	size_t room = s->len < s->size ? s->size - s->len : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? s->buf + s->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		s->len += (size_t)n;
}

static void putc_(struct sink *s, char ch)
{
	if (s->len + 1 < s->size) {
		s->buf[s->len] = ch;
		s->buf[s->len + 1] = '\0';
	}
	s->len++;
}

/* What ringtapd's text knows about a field, rebuilt from its Schema entry as libtraceevent does. */
struct field_kind {
	bool string;
	bool pointer;
	unsigned int elem_size;	/* 0: bytes */
	bool is_signed;
	bool fixed;		/* not __data_loc / __rel_loc */
	unsigned int size;
};

static unsigned int type_size(const char *name, size_t len)
{
	static const struct {
		const char *name;
		unsigned int size;
	} table[] = {
		{ "u8", 1 }, { "u16", 2 }, { "u32", 4 }, { "u64", 8 }, { "s8", 1 },
		{ "s16", 2 }, { "s32", 4 }, { "s64", 8 }, { "char", 1 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(table); i++)
		if (strlen(table[i].name) == len && !memcmp(table[i].name, name, len))
			return table[i].size;
	return 0;
}

static struct field_kind field_kind(const Ringtap__Field *f, unsigned int long_size)
{
	struct field_kind k = { .is_signed = f->is_signed, .size = f->size };
	const char *bracket = strchr(f->type, '[');

	k.fixed = !(f->has_dynamic && f->dynamic) && strncmp(f->type, "__data_loc", 10) &&
		  strncmp(f->type, "__rel_loc", 9);
	k.pointer = strchr(f->type, '*') != NULL;
	if (!bracket) {
		k.elem_size = f->size;
		return k;
	}
	k.string = strstr(f->type, "char") || strstr(f->type, "u8") || strstr(f->type, "s8");
	if (f->has_array_len && f->array_len) {
		k.elem_size = f->size / f->array_len;
	} else if (!k.fixed) {
		/* "__data_loc u32[]": the word before the brackets. */
		const char *w = bracket;

		while (w > f->type && w[-1] != ' ')
			w--;
		k.elem_size = type_size(w, (size_t)(bracket - w));
	} else if (k.string) {
		k.elem_size = 1;
	} else if (strstr(f->type, "long")) {
		k.elem_size = long_size;
	}
	return k;
}

static bool host_big_endian(void)
{
	const uint16_t one = 1;

	return *(const uint8_t *)&one == 0;
}

static uint64_t read_uint(const uint8_t *p, unsigned int size, bool big_endian)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < size; i++)
		v |= (uint64_t)p[big_endian ? size - 1 - i : i] << (8 * i);
	return v;
}

static int64_t sign_extend(uint64_t v, unsigned int size)
{
	unsigned int shift = 64 - 8 * size;

	return (int64_t)(v << shift) >> shift;
}

/* ringtapd's put_string(): up to the first NUL, printable ASCII but '\' as is. */
static void put_text_string(struct sink *s, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len && p[i]; i++) {
		if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\')
			putc_(s, (char)p[i]);
		else
			put(s, "\\x%02x", p[i]);
	}
}

/* Length of the UTF-8 sequence at p, 0 when it is not a valid one. */
static size_t utf8_len(const uint8_t *p, size_t len)
{
	size_t n;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (n > len)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* Overlong forms, surrogates and past U+10FFFF are not UTF-8. */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* A JSON string's insides; bytes that are not UTF-8 become \u00XX, so the line stays JSON. */
static void put_json_chars(struct sink *s, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len && p[i];) {
		size_t n = utf8_len(p + i, len - i);

		if (n > 1) {
			for (size_t j = 0; j < n; j++)
				putc_(s, (char)p[i + j]);
			i += n;
			continue;
		}
		if (p[i] == '"' || p[i] == '\\')
			put(s, "\\%c", p[i]);
		else if (p[i] == '\n')
			put(s, "\\n");
		else if (p[i] == '\t')
			put(s, "\\t");
		else if (p[i] < 0x20 || p[i] >= 0x7f)
			put(s, "\\u%04x", p[i]);
		else
			putc_(s, (char)p[i]);
		i++;
	}
}

static void put_json_string(struct sink *s, const uint8_t *p, size_t len)
{
	putc_(s, '"');
	put_json_chars(s, p, len);
	putc_(s, '"');
}

static void put_cstring(struct sink *s, const char *str, bool json)
{
	if (json)
		put_json_string(s, (const uint8_t *)str, strlen(str));
	else
		put_text_string(s, (const uint8_t *)str, strlen(str));
}

/* ringtapd's put_elements(): integers of the element width, or bytes. */
static void put_elements(struct sink *s, const struct field_kind *k, const uint8_t *p, size_t len,
			 bool big_endian, bool json)
{
	unsigned int esize = k->elem_size;

	if (esize != 1 && esize != 2 && esize != 4 && esize != 8)
		esize = 1;
	putc_(s, json ? '[' : '{');
	for (size_t i = 0; i + esize <= len; i += esize) {
		uint64_t v = read_uint(p + i, esize, big_endian);

		if (i)
			putc_(s, ',');
		if (k->is_signed)
			put(s, "%" PRId64, sign_extend(v, esize));
		else
			put(s, "%" PRIu64, v);
	}
	putc_(s, json ? ']' : '}');
}

static void put_value(struct sink *s, const Ringtap__Value *v, const Ringtap__Field *f,
		      unsigned int long_size, bool big_endian, bool json)
{
	struct field_kind k;

	if (!f) {
		/* A common value, or one past the schema: a number or nothing. */
		k = (struct field_kind){ 0 };
	} else {
		k = field_kind(f, long_size);
	}
	switch (v->v_case) {
	case RINGTAP__VALUE__V_S:
		put(s, "%" PRId64, v->s);
		break;
	case RINGTAP__VALUE__V_U:
		if (k.pointer && !json)
			put(s, "0x%" PRIx64, v->u);
		else
			put(s, "%" PRIu64, v->u);
		if (v->symbol && !json)
			put(s, "<%s>", v->symbol);
		break;
	case RINGTAP__VALUE__V_STR:
		put_cstring(s, v->str, json);
		break;
	case RINGTAP__VALUE__V_RAW:
		/* ringtapd sends empty bytes for a field that lies outside its record. */
		if (!v->raw.len && k.fixed && k.size)
			put(s, json ? "null" : "<out of record>");
		else if (k.string && json)
			put_json_string(s, v->raw.data, v->raw.len);
		else if (k.string)
			put_text_string(s, v->raw.data, v->raw.len);
		else
			put_elements(s, &k, v->raw.data, v->raw.len, big_endian, json);
		break;
	default:
		put(s, json ? "null" : "?");
		break;
	}
}

static const char *loss_source(Ringtap__LossSource source)
{
	switch (source) {
	case RINGTAP__LOSS_SOURCE__KERNEL:
		return "kernel";
	case RINGTAP__LOSS_SOURCE__QUEUE:
		return "queue";
	case RINGTAP__LOSS_SOURCE__MALFORMED:
		return "malformed";
	default:
		return "unknown";
	}
}

static void format_lost(struct sink *s, const Ringtap__Lost *l, bool json)
{
	bool inexact = l->has_count_exact && !l->count_exact;

	if (json) {
		put(s, "{\"lost\":%" PRIu64 ",\"cpu\":%" PRIu32 ",\"source\":\"%s\"%s}", l->count,
		    l->cpu, loss_source(l->source), inexact ? ",\"exact\":false" : "");
		return;
	}
	put(s, "# cpu %" PRIu32 ": lost %s%" PRIu64 " events (%s)", l->cpu,
	    inexact ? "at least " : "", l->count, loss_source(l->source));
}

static void format_record(struct sink *s, const Ringtap__Layout *layout,
			  const struct ringtap_event *ev, unsigned int flags)
{
	const Ringtap__Record *r = ev->record;
	const Ringtap__Schema *schema = ev->schema;
	unsigned int long_size = layout ? layout->long_size : sizeof(long);
	bool big_endian = layout ? layout->big_endian : host_big_endian();
	bool json = flags & RINGTAP_FORMAT_JSON;
	bool time = !(flags & RINGTAP_FORMAT_NO_TIME);

	if (json) {
		putc_(s, '{');
		if (time)
			put(s, "\"ts\":%" PRIu64 ",", r->timestamp);
		put(s, "\"cpu\":%u,\"event\":", ev->cpu);
		if (schema) {
			putc_(s, '"');
			put_json_chars(s, (const uint8_t *)schema->system, strlen(schema->system));
			putc_(s, ':');
			put_json_chars(s, (const uint8_t *)schema->name, strlen(schema->name));
			putc_(s, '"');
		} else {
			put(s, "null,\"event_id\":%" PRIu32, r->event_id);
		}
		put(s, ",\"pid\":%" PRId32 ",\"fields\":{", r->pid);
	} else {
		if (time)
			put(s, "%" PRIu64 ".%09" PRIu64 " ", r->timestamp / 1000000000,
			    r->timestamp % 1000000000);
		put(s, "[%03u] ", ev->cpu);
		if (!schema) {
			put(s, "unknown event id %" PRIu32, r->event_id);
			return;
		}
		put_cstring(s, schema->system, false);
		putc_(s, ':');
		put_cstring(s, schema->name, false);
		put(s, " pid=%" PRId32, r->pid);
	}
	for (size_t i = 0; i < r->n_fields; i++) {
		const Ringtap__Field *f = schema && i < schema->n_fields ? schema->fields[i] : NULL;

		if (json) {
			if (i)
				putc_(s, ',');
			put_cstring(s, f ? f->name : "?", true);
			putc_(s, ':');
		} else {
			putc_(s, ' ');
			put_cstring(s, f ? f->name : "?", false);
			putc_(s, '=');
		}
		put_value(s, r->fields[i], f, long_size, big_endian, json);
	}
	if (json)
		putc_(s, '}');
	if (r->n_common)
		put(s, json ? ",\"common\":{" : " |");
	for (size_t i = 0; i < r->n_common; i++) {
		char fallback[32];
		const char *name = fallback;

		if (layout && i < layout->n_common_fields)
			name = layout->common_fields[i]->name;
		else
			snprintf(fallback, sizeof(fallback), "common%zu", i);
		if (json) {
			if (i)
				putc_(s, ',');
			put_cstring(s, name, true);
			putc_(s, ':');
		} else {
			putc_(s, ' ');
			put_cstring(s, name, false);
			putc_(s, '=');
		}
		put_value(s, r->common[i], NULL, long_size, big_endian, json);
	}
	if (json)
		put(s, r->n_common ? "}}" : "}");
}

int ringtap_format_event(const struct ringtap_client *c, const struct ringtap_event *ev,
			 char *buf, size_t size, unsigned int flags)
{
	return ringtap_format_event_layout(c ? c->welcome->welcome->layout : NULL, ev, buf, size,
					   flags);
}

int ringtap_format_event_layout(const Ringtap__Layout *layout, const struct ringtap_event *ev,
				char *buf, size_t size, unsigned int flags)
{
	struct sink s = { .buf = buf, .size = size };

	if (size)
		buf[0] = '\0';
	if (ev->kind == RINGTAP_RECORD && ev->record)
		format_record(&s, layout, ev, flags);
	else if (ev->kind == RINGTAP_LOST && ev->lost)
		format_lost(&s, ev->lost, flags & RINGTAP_FORMAT_JSON);
	else if (ev->kind == RINGTAP_CPU_STATE && ev->cpu_state)
		put(&s, flags & RINGTAP_FORMAT_JSON ? "{\"cpu\":%u,\"online\":%s}" : "# cpu %u %s",
		    ev->cpu_state->cpu, flags & RINGTAP_FORMAT_JSON ?
		    (ev->cpu_state->online ? "true" : "false") :
		    (ev->cpu_state->online ? "online" : "offline"));
	else
		return -EINVAL;
	return s.len > INT32_MAX ? -EOVERFLOW : (int)s.len;
}
