// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client: libringtap and the ringtap command line client against a fake
 * ringtapd, a thread that reads the Hello with rt_wire_reader and answers
 * with frames made by rt_wire_encode. The Hello carries what was asked;
 * records come out one per Batch entry with their CPU and schema, losses,
 * heartbeats and errors as events, then the end; refusals map to their
 * errno and text; frames out of place and malformed bytes end the stream;
 * waits end at the timeout; records print exactly as ringtapd --stdout and
 * as JSON. argv[1], when given, is the ringtap executable to run.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"
#include "pointer-event.h"
#include "format.h"
#include "ring.h"
#include "ringtap.h"
#include "sent-view.h"
#include "util.h"
#include "wire.h"

#define FAKE_WAIT_MS 10000

static char tmpdir[] = "/tmp/test-client.XXXXXX";
static char sock_path[256];
static const char *cli_path;

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The bytes the fake daemon sends after the Hello. */
struct script {
	uint8_t *data;
	size_t len;
};

static void add_bytes(struct script *s, const void *p, size_t n)
{
	uint8_t *d = realloc(s->data, s->len + n);

	if (!d)
		abort();
	memcpy(d + s->len, p, n);
	s->data = d;
	s->len += n;
}

static void add_frame(struct script *s, Ringtap__Frame *f)
{
	uint8_t *bytes;
	size_t len;

	if (rt_wire_encode(f, &bytes, &len)) {
		fprintf(stderr, "cannot encode a %d frame\n", f->msg_case);
		abort();
	}
	add_bytes(s, bytes, len);
	free(bytes);
}

struct field_spec {
	const char *name, *type;
	uint32_t offset, size;
	bool is_signed;
	int array_len;		/* -1: not an array */
	bool dynamic;
};

static void make_fields(Ringtap__Field *f, Ringtap__Field **ptrs, const struct field_spec *spec,
			size_t n)
{
	for (size_t i = 0; i < n; i++) {
		ringtap__field__init(&f[i]);
		f[i].name = (char *)spec[i].name;
		f[i].type = (char *)spec[i].type;
		f[i].offset = spec[i].offset;
		f[i].size = spec[i].size;
		f[i].has_is_signed = true;
		f[i].is_signed = spec[i].is_signed;
		f[i].has_array_len = spec[i].array_len >= 0;
		f[i].array_len = spec[i].array_len >= 0 ? (uint32_t)spec[i].array_len : 0;
		f[i].has_dynamic = true;
		f[i].dynamic = spec[i].dynamic;
		ptrs[i] = &f[i];
	}
}

static const struct field_spec common_spec[] = {
	{ "common_type", "unsigned short", 0, 2, false, -1, false },
	{ "common_flags", "unsigned char", 2, 1, false, -1, false },
	{ "common_preempt_count", "unsigned char", 3, 1, false, -1, false },
	{ "common_pid", "int", 4, 4, true, -1, false },
};

static const char header_page[] = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
				   "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n";

static void add_welcome(struct script *s, uint32_t cpus, bool big_endian)
{
	static const struct field_spec page_spec[] = {
		{ "timestamp", "u64", 0, 8, false, -1, false },
		{ "commit", "local_t", 8, 8, true, -1, false },
		{ "data", "char", 16, 4080, true, -1, false },
	};
	Ringtap__Field page[3], *page_ptrs[3], common[4], *common_ptrs[4];
	Ringtap__Layout layout = RINGTAP__LAYOUT__INIT;
	Ringtap__Welcome w = RINGTAP__WELCOME__INIT;
	Ringtap__Frame f = RINGTAP__FRAME__INIT;

	make_fields(page, page_ptrs, page_spec, ARRAY_SIZE(page_spec));
	make_fields(common, common_ptrs, common_spec, ARRAY_SIZE(common_spec));
	layout.header_page = (char *)header_page;
	layout.header_event = "# compressed entry header\n";
	layout.n_page_fields = ARRAY_SIZE(page);
	layout.page_fields = page_ptrs;
	layout.n_common_fields = ARRAY_SIZE(common);
	layout.common_fields = common_ptrs;
	layout.sub_buffer_size = 4096;
	layout.long_size = 8;
	layout.big_endian = big_endian;
	w.version = 1;
	w.encoding = RINGTAP__ENCODING__DECODED;
	w.hostname = "testhost";
	w.kernel_release = "6.1.0-ringtap";
	w.boot_id = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
	w.cpus = cpus;
	w.trace_clock = "local";
	w.layout = &layout;
	f.msg_case = RINGTAP__FRAME__MSG_WELCOME;
	f.welcome = &w;
	add_frame(s, &f);
}

/* The fields of ringtap_test:ringtap_test, as the kernel patch defines them. */
static const struct field_spec rtt_spec[] = {
	{ "seq", "u64", 8, 8, false, -1, false },
	{ "cpu", "u32", 16, 4, false, -1, false },
	{ "tag", "char[8]", 20, 8, true, 8, false },
	{ "msg", "__data_loc char[]", 28, 4, true, 0, true },
};

#define RTT_ID 169

static void add_schema(struct script *s, uint32_t id, const char *system, const char *name,
		       const struct field_spec *spec, size_t n)
{
	Ringtap__Field fields[8], *ptrs[8];
	Ringtap__Schema schema = RINGTAP__SCHEMA__INIT;
	Ringtap__Frame f = RINGTAP__FRAME__INIT;

	if (n > ARRAY_SIZE(fields))
		abort();
	make_fields(fields, ptrs, spec, n);
	schema.event_id = id;
	schema.system = (char *)system;
	schema.name = (char *)name;
	schema.n_fields = n;
	schema.fields = ptrs;
	f.msg_case = RINGTAP__FRAME__MSG_SCHEMA;
	f.schema = &schema;
	add_frame(s, &f);
}

static Ringtap__Value val_u(uint64_t u)
{
	Ringtap__Value v = RINGTAP__VALUE__INIT;

	v.v_case = RINGTAP__VALUE__V_U;
	v.u = u;
	return v;
}

static Ringtap__Value val_s(int64_t sv)
{
	Ringtap__Value v = RINGTAP__VALUE__INIT;

	v.v_case = RINGTAP__VALUE__V_S;
	v.s = sv;
	return v;
}

static Ringtap__Value val_str(const char *str)
{
	Ringtap__Value v = RINGTAP__VALUE__INIT;

	v.v_case = RINGTAP__VALUE__V_STR;
	v.str = (char *)str;
	return v;
}

static Ringtap__Value val_raw(const void *p, size_t len)
{
	Ringtap__Value v = RINGTAP__VALUE__INIT;

	v.v_case = RINGTAP__VALUE__V_RAW;
	v.raw.data = (uint8_t *)p;
	v.raw.len = len;
	return v;
}

struct rec_spec {
	uint64_t ts;
	uint32_t id;
	int32_t pid;
	Ringtap__Value vals[8];
	size_t n_vals;
	Ringtap__Value common[4];
	size_t n_common;
};

/* A Record pointing into spec; ptrs holds 12 pointers. */
static void make_record(Ringtap__Record *r, Ringtap__Value **ptrs, struct rec_spec *spec)
{
	ringtap__record__init(r);
	r->timestamp = spec->ts;
	r->event_id = spec->id;
	r->pid = spec->pid;
	for (size_t i = 0; i < spec->n_vals; i++)
		ptrs[i] = &spec->vals[i];
	for (size_t i = 0; i < spec->n_common; i++)
		ptrs[spec->n_vals + i] = &spec->common[i];
	r->n_fields = spec->n_vals;
	r->fields = ptrs;
	r->n_common = spec->n_common;
	r->common = ptrs + spec->n_vals;
}

static void add_batch(struct script *s, uint32_t cpu, struct rec_spec *specs, size_t n)
{
	Ringtap__Record recs[4], *rec_ptrs[4];
	Ringtap__Value *val_ptrs[4][12];
	Ringtap__Batch b = RINGTAP__BATCH__INIT;
	Ringtap__Frame f = RINGTAP__FRAME__INIT;

	if (n > ARRAY_SIZE(recs))
		abort();
	for (size_t i = 0; i < n; i++) {
		make_record(&recs[i], val_ptrs[i], &specs[i]);
		rec_ptrs[i] = &recs[i];
	}
	b.cpu = cpu;
	b.n_records = n;
	b.records = rec_ptrs;
	f.msg_case = RINGTAP__FRAME__MSG_BATCH;
	f.batch = &b;
	add_frame(s, &f);
}

static void add_lost(struct script *s, uint32_t cpu, uint64_t count, Ringtap__LossSource source)
{
	Ringtap__Lost l = RINGTAP__LOST__INIT;
	Ringtap__Frame f = RINGTAP__FRAME__INIT;

	l.cpu = cpu;
	l.count = count;
	l.source = source;
	l.has_count_exact = true;
	l.count_exact = true;
	f.msg_case = RINGTAP__FRAME__MSG_LOST;
	f.lost = &l;
	add_frame(s, &f);
}

static void add_bye(struct script *s)
{
	Ringtap__Bye b = RINGTAP__BYE__INIT;
	Ringtap__Frame f = RINGTAP__FRAME__INIT;

	f.msg_case = RINGTAP__FRAME__MSG_BYE;
	f.bye = &b;
	add_frame(s, &f);
}

static void add_refusal(struct script *s, Ringtap__RefusalReason reason, const char *text)
{
	Ringtap__Refusal r = RINGTAP__REFUSAL__INIT;
	Ringtap__Frame f = RINGTAP__FRAME__INIT;

	r.reason = reason;
	r.text = (char *)text;
	f.msg_case = RINGTAP__FRAME__MSG_REFUSAL;
	f.refusal = &r;
	add_frame(s, &f);
}

static void add_error(struct script *s, uint32_t code, const char *text)
{
	Ringtap__Error e = RINGTAP__ERROR__INIT;
	Ringtap__Frame f = RINGTAP__FRAME__INIT;

	e.code = code;
	e.text = (char *)text;
	f.msg_case = RINGTAP__FRAME__MSG_ERROR;
	f.error = &e;
	add_frame(s, &f);
}

static void add_heartbeat(struct script *s, uint64_t trace_ns, uint64_t real_ns)
{
	Ringtap__Heartbeat h = RINGTAP__HEARTBEAT__INIT;
	Ringtap__Frame f = RINGTAP__FRAME__INIT;

	h.trace_clock_ns = trace_ns;
	h.realtime_ns = real_ns;
	f.msg_case = RINGTAP__FRAME__MSG_HEARTBEAT;
	f.heartbeat = &h;
	add_frame(s, &f);
}

/* The two records of cpu 1 most tests send, the second with common fields. */
static void rtt_records(struct rec_spec r[2])
{
	memset(r, 0, 2 * sizeof(*r));
	r[0] = (struct rec_spec){ .ts = 1700000000123456789ULL, .id = RTT_ID, .pid = 42,
				  .n_vals = 4 };
	r[0].vals[0] = val_u(0);
	r[0].vals[1] = val_u(1);
	r[0].vals[2] = val_str("rtaptest");
	r[0].vals[3] = val_str("cpu1 seq 0 ");
	r[1] = (struct rec_spec){ .ts = 1700000001000000005ULL, .id = RTT_ID, .pid = 43,
				  .n_vals = 4, .n_common = 4 };
	r[1].vals[0] = val_u(1);
	r[1].vals[1] = val_u(1);
	r[1].vals[2] = val_str("rtaptest");
	r[1].vals[3] = val_str("cpu1 seq 1 ");
	r[1].common[0] = val_u(RTT_ID);
	r[1].common[1] = val_u(1);
	r[1].common[2] = val_u(0);
	r[1].common[3] = val_u(43);
}

/* The fake ringtapd: one connection, the Hello, the script, then what the client says. */
struct fake {
	int lfd;
	struct script script;
	bool hold;		/* after the script, wait for the client to close */
	pthread_t thread;
	/* For the test to read after fake_finish(). */
	Ringtap__Frame *hello;
	size_t n_after;		/* frames the client sent after the Hello */
	bool bye;		/* one of them was a Bye */
	unsigned int updates_for_texts;	/* Updates that asked for HostTexts */
	bool client_closed;
	volatile bool script_sent;
	const char *trouble;	/* what went wrong in the fake itself */
	/* With pass_fd > 0, the descriptor goes along the script's bytes from pass_at on. */
	int pass_fd;
	size_t pass_at;
};

struct conn {
	int fd;
	struct rt_wire_reader r;
	uint8_t buf[4096];
	size_t pos, len;
};

/* 1 and a frame, 0 at end of stream, -ETIMEDOUT, or the reader's error. */
static int fake_read_frame(struct conn *c, Ringtap__Frame **f)
{
	for (;;) {
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		size_t used;
		ssize_t n;
		int ret = rt_wire_reader_next(&c->r, f);

		if (ret)
			return ret;
		if (c->pos < c->len) {
			ret = rt_wire_reader_feed(&c->r, c->buf + c->pos, c->len - c->pos, &used);
			c->pos += used;
			if (ret < 0)
				return ret;
			continue;
		}
		if (poll(&pfd, 1, FAKE_WAIT_MS) <= 0)
			return -ETIMEDOUT;
		n = recv(c->fd, c->buf, sizeof(c->buf), 0);
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		c->pos = 0;
		c->len = (size_t)n;
	}
}

/* Bytes with a descriptor passed along (SCM_RIGHTS), as ringtapd sends the Ring frame. */
static ssize_t send_fd(int sock, const void *p, size_t len, int fd)
{
	union {
		struct cmsghdr align;
		char room[CMSG_SPACE(sizeof(int))];
	} control = { 0 };
	struct iovec iov = { .iov_base = (void *)p, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.room,
			      .msg_controllen = sizeof(control.room) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL);
}

static void *fake_main(void *arg)
{
	struct fake *fk = arg;
	struct pollfd pfd = { .fd = fk->lfd, .events = POLLIN };
	struct conn c = { .fd = -1 };
	Ringtap__Frame *f;
	size_t off = 0;
	int ret;

	rt_wire_reader_init(&c.r, 64 << 10);
	if (poll(&pfd, 1, FAKE_WAIT_MS) <= 0 || (c.fd = accept(fk->lfd, NULL, NULL)) < 0) {
		fk->trouble = "no client";
		goto out;
	}
	if (fake_read_frame(&c, &fk->hello) != 1 ||
	    fk->hello->msg_case != RINGTAP__FRAME__MSG_HELLO) {
		fk->trouble = "no Hello";
		goto out;
	}
	while (off < fk->script.len) {
		size_t end = fk->pass_fd > 0 && off < fk->pass_at ? fk->pass_at : fk->script.len;
		ssize_t n;

		if (fk->pass_fd > 0 && off == fk->pass_at)
			n = send_fd(c.fd, fk->script.data + off, fk->script.len - off, fk->pass_fd);
		else
			n = send(c.fd, fk->script.data + off, end - off, MSG_NOSIGNAL);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	fk->script_sent = true;
	if (!fk->hold)
		shutdown(c.fd, SHUT_WR);
	while ((ret = fake_read_frame(&c, &f)) == 1) {
		fk->n_after++;
		fk->updates_for_texts += f->msg_case == RINGTAP__FRAME__MSG_UPDATE &&
					 f->update->subscription->host_texts;
		fk->bye |= f->msg_case == RINGTAP__FRAME__MSG_BYE;
		ringtap__frame__free_unpacked(f, NULL);
	}
	fk->client_closed = ret == 0;
out:
	if (c.fd >= 0)
		close(c.fd);
	rt_wire_reader_release(&c.r);
	return NULL;
}

static void fake_start(struct fake *fk, bool hold)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	fk->hold = hold;
	fk->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	strcpy(sa.sun_path, sock_path);
	unlink(sock_path);
	if (fk->lfd < 0 || bind(fk->lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fk->lfd, 4) || pthread_create(&fk->thread, NULL, fake_main, fk)) {
		perror("fake ringtapd");
		abort();
	}
}

static void fake_finish(struct fake *fk)
{
	pthread_join(fk->thread, NULL);
	close(fk->lfd);
	unlink(sock_path);
	if (fk->trouble)
		fprintf(stderr, "fake ringtapd: %s\n", fk->trouble);
	CHECK(fk->trouble == NULL);
}

static void fake_free(struct fake *fk)
{
	if (fk->hello)
		ringtap__frame__free_unpacked(fk->hello, NULL);
	free(fk->script.data);
	memset(fk, 0, sizeof(*fk));
}

static const char *const rtt_events[] = { "ringtap_test:*", "sched:sched_switch", NULL };

static struct ringtap_client_opts opts_for(const char *const *events)
{
	return (struct ringtap_client_opts){
		.socket_path = sock_path, .client_name = "test-client", .events = events,
	};
}

static void check_hello(const Ringtap__Frame *f, const char *name, const char *const *events,
			bool common)
{
	const Ringtap__Hello *h;
	size_t n = 0;

	CHECK(f && f->msg_case == RINGTAP__FRAME__MSG_HELLO);
	if (!f || f->msg_case != RINGTAP__FRAME__MSG_HELLO)
		return;
	h = f->hello;
	CHECK_EQ(h->min_version, 1);
	if (h->has_transport && h->transport == RINGTAP__TRANSPORT__RING) {
		/* Ring or socket: version 2 and RAW for the ring, 1 and DECODED for the socket. */
		CHECK_EQ(h->max_version, 2);
		CHECK_EQ(h->n_encodings, 2);
		CHECK(h->n_encodings == 2 && h->encodings[0] == RINGTAP__ENCODING__DECODED &&
		      h->encodings[1] == RINGTAP__ENCODING__RAW);
	} else {
		CHECK_EQ(h->max_version, 1);
		CHECK_EQ(h->n_encodings, 1);
		CHECK(h->n_encodings == 1 && h->encodings[0] == RINGTAP__ENCODING__DECODED);
	}
	CHECK_STR(h->client_name, name);
	while (events && events[n])
		n++;
	if (!n) {
		CHECK(h->subscription == NULL);
		return;
	}
	CHECK(h->subscription != NULL);
	if (!h->subscription)
		return;
	CHECK_EQ(h->subscription->n_events, n);
	for (size_t i = 0; i < n && i < h->subscription->n_events; i++)
		CHECK_STR(h->subscription->events[i], events[i]);
	CHECK_EQ(h->subscription->has_common_fields, common);
	CHECK_EQ(h->subscription->common_fields, common);
	CHECK_EQ(h->subscription->n_cpus, 0);
	CHECK_EQ(h->subscription->n_pids, 0);
}

static char *format(const struct ringtap_client *c, const struct ringtap_event *ev,
		    unsigned int flags)
{
	static char line[1024];
	int n = ringtap_format_event(c, ev, line, sizeof(line), flags);

	CHECK(n >= 0 && (size_t)n == strlen(line));
	return line;
}

/* Welcome, Schema, Batch(2 records, cpu 1), Lost(cpu 0, 5, KERNEL), close. */
static void test_stream(void)
{
	struct ringtap_client_opts o = opts_for(rtt_events);
	struct ringtap_connect_error err;
	struct ringtap_client *c = NULL;
	const Ringtap__Welcome *w;
	struct ringtap_event ev;
	struct rec_spec recs[2];
	struct fake fk = { 0 };
	const Ringtap__Record *r;

	add_welcome(&fk.script, 2, false);
	add_schema(&fk.script, RTT_ID, "ringtap_test", "ringtap_test", rtt_spec,
		   ARRAY_SIZE(rtt_spec));
	rtt_records(recs);
	add_batch(&fk.script, 1, recs, 2);
	add_lost(&fk.script, 0, 5, RINGTAP__LOSS_SOURCE__KERNEL);
	fake_start(&fk, false);

	o.common_fields = true;
	CHECK_EQ(ringtap_connect(&c, &o, &err), 0);
	CHECK(c != NULL);
	if (!c) {
		fprintf(stderr, "connect: %s\n", err.text);
		fake_finish(&fk);
		fake_free(&fk);
		return;
	}
	CHECK_STR(err.text, "");
	CHECK_EQ(err.refusal, 0);
	CHECK(ringtap_fd(c) >= 0);
	w = ringtap_welcome(c);
	CHECK_STR(w->hostname, "testhost");
	CHECK_EQ(w->cpus, 2);
	CHECK_EQ(w->layout->n_common_fields, 4);

	CHECK_EQ(ringtap_next(c, &ev, 1000), 1);
	CHECK_EQ(ev.kind, RINGTAP_RECORD);
	CHECK_EQ(ev.cpu, 1);
	r = ev.record;
	CHECK(r && ev.schema);
	if (r && ev.schema) {
		CHECK(r->timestamp == 1700000000123456789ULL);
		CHECK_EQ(r->pid, 42);
		CHECK_EQ(r->event_id, RTT_ID);
		CHECK_EQ(r->n_fields, 4);
		CHECK(r->n_fields == 4 && r->fields[1]->v_case == RINGTAP__VALUE__V_U &&
		      r->fields[1]->u == 1);
		CHECK_STR(r->n_fields == 4 ? r->fields[3]->str : NULL, "cpu1 seq 0 ");
		CHECK_EQ(ev.schema->event_id, RTT_ID);
		CHECK_STR(ev.schema->name, "ringtap_test");
		CHECK_STR(format(c, &ev, 0), "1700000000.123456789 [001] ringtap_test:ringtap_test "
					     "pid=42 seq=0 cpu=1 tag=rtaptest msg=cpu1 seq 0 ");
	}
	CHECK(ev.lost == NULL && ev.error == NULL && ev.heartbeat == NULL);

	CHECK_EQ(ringtap_next(c, &ev, 1000), 1);
	CHECK_EQ(ev.kind, RINGTAP_RECORD);
	CHECK_EQ(ev.cpu, 1);
	r = ev.record;
	CHECK(r && ev.schema);
	if (r && ev.schema) {
		CHECK_EQ(r->pid, 43);
		CHECK(r->n_fields == 4 && r->fields[0]->u == 1);
		CHECK_EQ(r->n_common, 4);
		CHECK_EQ(ev.schema->n_fields, 4);
		CHECK_STR(format(c, &ev, RINGTAP_FORMAT_NO_TIME),
			  "[001] ringtap_test:ringtap_test pid=43 seq=1 cpu=1 tag=rtaptest "
			  "msg=cpu1 seq 1  | common_type=169 common_flags=1 common_preempt_count=0 "
			  "common_pid=43");
		CHECK_STR(format(c, &ev, RINGTAP_FORMAT_JSON),
			  "{\"ts\":1700000001000000005,\"cpu\":1,"
			  "\"event\":\"ringtap_test:ringtap_test\",\"pid\":43,"
			  "\"fields\":{\"seq\":1,\"cpu\":1,\"tag\":\"rtaptest\","
			  "\"msg\":\"cpu1 seq 1 \"},\"common\":{\"common_type\":169,"
			  "\"common_flags\":1,\"common_preempt_count\":0,\"common_pid\":43}}");
	}

	CHECK_EQ(ringtap_next(c, &ev, 1000), 1);
	CHECK_EQ(ev.kind, RINGTAP_LOST);
	CHECK_EQ(ev.cpu, 0);
	CHECK(ev.lost && ev.lost->count == 5 && ev.lost->source == RINGTAP__LOSS_SOURCE__KERNEL);
	CHECK(ev.record == NULL);
	CHECK_STR(format(c, &ev, 0), "# cpu 0: lost 5 events (kernel)");

	CHECK_EQ(ringtap_next(c, &ev, 1000), 1);
	CHECK_EQ(ev.kind, RINGTAP_END);
	/* And it stays at the end. */
	CHECK_EQ(ringtap_next(c, &ev, 0), 1);
	CHECK_EQ(ev.kind, RINGTAP_END);
	CHECK_STR(ringtap_error_text(c), "");
	ringtap_close(c);

	fake_finish(&fk);
	check_hello(fk.hello, "test-client", rtt_events, true);
	CHECK(fk.bye);
	CHECK_EQ(fk.n_after, 1);
	CHECK(fk.client_closed);
	fake_free(&fk);
}

static void test_refusals(void)
{
	static const struct {
		Ringtap__RefusalReason reason;
		int err;
		const char *text;
		const char *want;
	} cases[] = {
		{ RINGTAP__REFUSAL_REASON__NO_COMMON_VERSION, -EPROTONOSUPPORT, "speaks 2 to 3",
		  "ringtapd refused the connection (NO_COMMON_VERSION): speaks 2 to 3" },
		{ RINGTAP__REFUSAL_REASON__NO_ACCEPTABLE_ENCODING, -ENOPROTOOPT, "RAW only",
		  "ringtapd refused the connection (NO_ACCEPTABLE_ENCODING): RAW only" },
		{ RINGTAP__REFUSAL_REASON__UNKNOWN_EVENT, -ENOENT, "no event matches nosuch:*",
		  "ringtapd refused the connection (UNKNOWN_EVENT): no event matches nosuch:*" },
		{ RINGTAP__REFUSAL_REASON__NOT_AUTHORIZED, -EACCES, "uid 1000 is not in ringtap",
		  "ringtapd refused the connection (NOT_AUTHORIZED): uid 1000 is not in ringtap" },
		{ RINGTAP__REFUSAL_REASON__BAD_SUBSCRIPTION, -EINVAL, "too many globs",
		  "ringtapd refused the connection (BAD_SUBSCRIPTION): too many globs" },
		{ RINGTAP__REFUSAL_REASON__REFUSAL_UNSPECIFIED, -ECONNREFUSED, NULL,
		  "ringtapd refused the connection (REFUSAL_UNSPECIFIED): no reason given" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		/* The last case also checks a Hello without a subscription. */
		const char *const *events = i + 1 < ARRAY_SIZE(cases) ? rtt_events : NULL;
		struct ringtap_client_opts o = opts_for(events);
		struct ringtap_connect_error err;
		struct ringtap_client *c = (void *)1;
		struct fake fk = { 0 };

		add_refusal(&fk.script, cases[i].reason, cases[i].text);
		fake_start(&fk, false);
		CHECK_EQ(ringtap_connect(&c, &o, &err), cases[i].err);
		CHECK(c == NULL);
		CHECK_EQ(err.refusal, cases[i].reason);
		CHECK_STR(err.text, cases[i].want);
		fake_finish(&fk);
		check_hello(fk.hello, "test-client", events, false);
		CHECK(fk.client_closed);
		fake_free(&fk);
	}
}

/* Welcome, then the extra script; returns what ringtap_next() says after the events it takes. */
static int stream_until_error(void (*build)(struct script *), int *events, char *text,
			      size_t text_size)
{
	struct ringtap_client_opts o = opts_for(rtt_events);
	struct ringtap_client *c = NULL;
	struct ringtap_event ev;
	struct fake fk = { 0 };
	int ret;

	add_welcome(&fk.script, 2, false);
	build(&fk.script);
	fake_start(&fk, false);
	ret = ringtap_connect(&c, &o, NULL);
	CHECK_EQ(ret, 0);
	*events = 0;
	if (c) {
		while ((ret = ringtap_next(c, &ev, 2000)) == 1 && ev.kind != RINGTAP_END)
			(*events)++;
		if (ret < 0) {
			/* Sticky, with a reason. */
			CHECK_EQ(ringtap_next(c, &ev, 0), ret);
			CHECK(ringtap_error_text(c)[0] != '\0');
		}
		snprintf(text, text_size, "%s", ringtap_error_text(c));
		ringtap_close(c);
	}
	fake_finish(&fk);
	fake_free(&fk);
	return ret;
}

static void record_before_schema(struct script *s)
{
	struct rec_spec recs[2];

	add_schema(s, 170, "sched", "sched_switch", rtt_spec, ARRAY_SIZE(rtt_spec));
	rtt_records(recs);
	add_batch(s, 0, recs, 1);
}

static void second_schema(struct script *s)
{
	add_schema(s, RTT_ID, "ringtap_test", "ringtap_test", rtt_spec, ARRAY_SIZE(rtt_spec));
	add_schema(s, RTT_ID, "ringtap_test", "ringtap_test", rtt_spec, ARRAY_SIZE(rtt_spec));
}

static void values_mismatch(struct script *s)
{
	struct rec_spec recs[2];

	add_schema(s, RTT_ID, "ringtap_test", "ringtap_test", rtt_spec, ARRAY_SIZE(rtt_spec));
	rtt_records(recs);
	recs[1].n_vals = 3;
	add_batch(s, 1, recs, 2);
}

static void cpu_out_of_range(struct script *s)
{
	add_lost(s, 2, 1, RINGTAP__LOSS_SOURCE__QUEUE);
}

static void second_welcome(struct script *s)
{
	add_welcome(s, 2, false);
}

static void garbage(struct script *s)
{
	static const uint8_t bytes[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };

	add_bytes(s, bytes, sizeof(bytes));
}

static void not_a_frame(struct script *s)
{
	static const uint8_t bytes[] = { 0x03, 0xff, 0xff, 0xff };

	add_heartbeat(s, 1, 2);
	add_bytes(s, bytes, sizeof(bytes));
}

static void too_long(struct script *s)
{
	uint8_t len[RT_WIRE_VARINT_MAX];

	add_bytes(s, len, rt_wire_varint_encode((16u << 20) + 1, len));
}

static void cut_frame(struct script *s)
{
	struct script whole = { 0 };

	add_heartbeat(&whole, 1, 2);
	add_bytes(s, whole.data, whole.len - 1);
	free(whole.data);
}

static void test_bad_streams(void)
{
	static const struct {
		const char *name;
		void (*build)(struct script *);
		int events;
		int err;
		const char *text;
	} cases[] = {
		{ "record before schema", record_before_schema, 0, -EPROTO,
		  "a Record of event id 169 before its Schema" },
		{ "second schema", second_schema, 0, -EPROTO, "a second Schema for event id 169" },
		{ "values mismatch", values_mismatch, 1, -EPROTO,
		  "a Record of ringtap_test:ringtap_test with 3 values for 4 fields" },
		{ "cpu out of range", cpu_out_of_range, 0, -EPROTO,
		  "a Lost for cpu 2, the Welcome said 2 CPUs" },
		{ "second welcome", second_welcome, 0, -EPROTO, "an unexpected welcome frame" },
		{ "garbage", garbage, 0, -EBADMSG,
		  "malformed frame: length varint longer than 64 bits" },
		{ "not a frame", not_a_frame, 1, -EBADMSG,
		  "malformed frame: payload is not a valid Frame" },
		{ "too long", too_long, 0, -EBADMSG,
		  "frame larger than the limit: frame length over the limit" },
		{ "cut frame", cut_frame, 0, -EBADMSG, "connection closed inside a frame" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char text[256];
		int events, ret = stream_until_error(cases[i].build, &events, text, sizeof(text));

		if (ret != cases[i].err)
			fprintf(stderr, "case %s:\n", cases[i].name);
		CHECK_EQ(ret, cases[i].err);
		CHECK_EQ(events, cases[i].events);
		CHECK_STR(text, cases[i].text);
	}
}

/* Garbage, or nothing, instead of a Welcome. */
static void test_bad_answers(void)
{
	struct ringtap_client_opts o = opts_for(rtt_events);
	struct ringtap_connect_error err;
	struct ringtap_client *c;
	struct fake fk = { 0 };
	int64_t t0;

	garbage(&fk.script);
	fake_start(&fk, false);
	CHECK_EQ(ringtap_connect(&c, &o, &err), -EBADMSG);
	CHECK_EQ(err.refusal, 0);
	CHECK(strstr(err.text, "length varint longer than 64 bits") != NULL);
	fake_finish(&fk);
	fake_free(&fk);

	/* Closed without a word. */
	fake_start(&fk, false);
	CHECK_EQ(ringtap_connect(&c, &o, &err), -ECONNRESET);
	CHECK(strstr(err.text, "closed the connection without an answer") != NULL);
	fake_finish(&fk);
	fake_free(&fk);

	/* An Error frame: the daemon could not read the Hello. */
	add_error(&fk.script, EBADMSG, "Hello without versions");
	fake_start(&fk, false);
	CHECK_EQ(ringtap_connect(&c, &o, &err), -EBADMSG);
	CHECK_STR(err.text, "ringtapd: Hello without versions (Bad message)");
	fake_finish(&fk);
	fake_free(&fk);

	/* Silence: the handshake timeout. */
	fake_start(&fk, true);
	o.timeout_ms = 200;
	t0 = now_ms();
	CHECK_EQ(ringtap_connect(&c, &o, &err), -ETIMEDOUT);
	t0 = now_ms() - t0;
	CHECK(t0 >= 190 && t0 < 2000);
	CHECK(strstr(err.text, "within 200 ms") != NULL);
	fake_finish(&fk);
	CHECK(fk.client_closed);
	fake_free(&fk);
}

static void test_no_daemon(void)
{
	struct ringtap_client_opts o = opts_for(rtt_events);
	struct ringtap_connect_error err;
	struct ringtap_client *c = (void *)1;
	char want[512], path[200];

	snprintf(path, sizeof(path), "%s/none.sock", tmpdir);
	o.socket_path = path;
	CHECK_EQ(ringtap_connect(&c, &o, &err), -ENOENT);
	CHECK(c == NULL);
	CHECK_EQ(err.refusal, 0);
	snprintf(want, sizeof(want), "cannot connect to %s: No such file or directory", path);
	CHECK_STR(err.text, want);
	/* No err: just the errno. */
	CHECK_EQ(ringtap_connect(&c, &o, NULL), -ENOENT);

	memset(want, 'x', 150);
	want[0] = '/';
	want[150] = '\0';
	o.socket_path = want;
	CHECK_EQ(ringtap_connect(&c, &o, &err), -ENAMETOOLONG);
}

static void test_timeout(void)
{
	struct ringtap_client_opts o = opts_for(rtt_events);
	struct ringtap_client *c = NULL;
	struct ringtap_event ev;
	struct fake fk = { 0 };
	int64_t t0, dt;

	add_welcome(&fk.script, 1, false);
	fake_start(&fk, true);
	CHECK_EQ(ringtap_connect(&c, &o, NULL), 0);
	if (c) {
		t0 = now_ms();
		CHECK_EQ(ringtap_next(c, &ev, 300), 0);
		dt = now_ms() - t0;
		CHECK(dt >= 290 && dt < 2000);
		t0 = now_ms();
		CHECK_EQ(ringtap_next(c, &ev, 0), 0);
		CHECK(now_ms() - t0 < 100);
		/* A timeout is not an error. */
		CHECK_STR(ringtap_error_text(c), "");
		ringtap_close(c);
	}
	fake_finish(&fk);
	CHECK(fk.bye && fk.client_closed);
	fake_free(&fk);
}

static void test_heartbeat_error(void)
{
	struct ringtap_client_opts o = opts_for(rtt_events);
	struct ringtap_client *c = NULL;
	struct ringtap_event ev;
	struct fake fk = { 0 };

	add_welcome(&fk.script, 1, false);
	add_heartbeat(&fk.script, 111, 222);
	add_error(&fk.script, EIO, "tracefs went away");
	fake_start(&fk, false);
	CHECK_EQ(ringtap_connect(&c, &o, NULL), 0);
	if (c) {
		CHECK_EQ(ringtap_next(c, &ev, 1000), 1);
		CHECK_EQ(ev.kind, RINGTAP_HEARTBEAT);
		CHECK(ev.heartbeat && ev.heartbeat->trace_clock_ns == 111 &&
		      ev.heartbeat->realtime_ns == 222);
		CHECK_EQ(ringtap_format_event(c, &ev, NULL, 0, 0), -EINVAL);
		CHECK_EQ(ringtap_next(c, &ev, 1000), 1);
		CHECK_EQ(ev.kind, RINGTAP_ERROR_FRAME);
		CHECK(ev.error && ev.error->code == EIO);
		CHECK_STR(ev.error ? ev.error->text : NULL, "tracefs went away");
		CHECK_EQ(ringtap_next(c, &ev, 1000), 1);
		CHECK_EQ(ev.kind, RINGTAP_END);
		ringtap_close(c);
	}
	fake_finish(&fk);
	fake_free(&fk);
}

/* Batches larger than one read, and an empty Batch, come through whole and in order. */
static void test_many(void)
{
	struct ringtap_client_opts o = opts_for(rtt_events);
	struct ringtap_client *c = NULL;
	struct ringtap_event ev;
	struct fake fk = { 0 };
	char msg[64 << 10];
	uint64_t next_seq = 0;
	int ret;

	memset(msg, 'm', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	add_welcome(&fk.script, 1, false);
	add_schema(&fk.script, RTT_ID, "ringtap_test", "ringtap_test", rtt_spec,
		   ARRAY_SIZE(rtt_spec));
	add_batch(&fk.script, 0, NULL, 0);
	for (int b = 0; b < 8; b++) {
		struct rec_spec recs[4];

		for (int i = 0; i < 4; i++) {
			recs[i] = (struct rec_spec){ .ts = 1000 + b * 4 + i, .id = RTT_ID,
						     .pid = 1, .n_vals = 4 };
			recs[i].vals[0] = val_u((uint64_t)(b * 4 + i));
			recs[i].vals[1] = val_u(0);
			recs[i].vals[2] = val_str("rtaptest");
			recs[i].vals[3] = val_str(msg + (b * 4 + i) * 1000);
		}
		add_batch(&fk.script, 0, recs, 4);
	}
	fake_start(&fk, false);
	CHECK_EQ(ringtap_connect(&c, &o, NULL), 0);
	if (c) {
		while ((ret = ringtap_next(c, &ev, 2000)) == 1 && ev.kind == RINGTAP_RECORD) {
			if (ev.record->fields[0]->u != next_seq ||
			    strlen(ev.record->fields[3]->str) != sizeof(msg) - 1 - next_seq * 1000)
				break;
			next_seq++;
		}
		CHECK_EQ(ret, 1);
		CHECK_EQ(ev.kind, RINGTAP_END);
		CHECK_EQ(next_seq, 32);
		ringtap_close(c);
	}
	fake_finish(&fk);
	fake_free(&fk);
}

/* Array widths from the schema, and the kernel's byte order from the Welcome. */
static void test_big_endian(void)
{
	static const struct field_spec spec[] = {
		{ "vals", "u16[2]", 8, 4, false, 2, false },
		{ "deltas", "__data_loc s32[]", 12, 4, true, 0, true },
	};
	static const uint8_t vals[] = { 0x12, 0x34, 0x00, 0x01 };
	static const uint8_t deltas[] = { 0xff, 0xff, 0xff, 0xfe, 0x00, 0x00, 0x01, 0x00 };
	struct ringtap_client_opts o = opts_for(rtt_events);
	struct ringtap_client *c = NULL;
	struct ringtap_event ev;
	struct rec_spec rec = { .ts = 5, .id = 7, .pid = -1, .n_vals = 2 };
	struct fake fk = { 0 };

	rec.vals[0] = val_raw(vals, sizeof(vals));
	rec.vals[1] = val_raw(deltas, sizeof(deltas));
	add_welcome(&fk.script, 4, true);
	add_schema(&fk.script, 7, "test", "arrays", spec, ARRAY_SIZE(spec));
	add_batch(&fk.script, 3, &rec, 1);
	fake_start(&fk, false);
	CHECK_EQ(ringtap_connect(&c, &o, NULL), 0);
	if (c) {
		CHECK_EQ(ringtap_next(c, &ev, 1000), 1);
		CHECK_EQ(ev.kind, RINGTAP_RECORD);
		CHECK_STR(format(c, &ev, 0),
			  "0.000000005 [003] test:arrays pid=-1 vals={4660,1} deltas={-2,256}");
		CHECK_STR(format(c, &ev, RINGTAP_FORMAT_JSON | RINGTAP_FORMAT_NO_TIME),
			  "{\"cpu\":3,\"event\":\"test:arrays\",\"pid\":-1,\"fields\":"
			  "{\"vals\":[4660,1],\"deltas\":[-2,256]}}");
		ringtap_close(c);
	}
	fake_finish(&fk);
	fake_free(&fk);
}

/* The formatting of every kind of value, without a client: host byte order. */
static void test_format(void)
{
	static const struct field_spec spec[] = {
		{ "seq", "u64", 8, 8, false, -1, false },
		{ "delta", "int", 16, 4, true, -1, false },
		{ "tag", "char[8]", 20, 8, true, 8, false },
		{ "name", "__data_loc char[]", 28, 4, true, 0, true },
		{ "vals", "u16[3]", 32, 6, false, 3, false },
		{ "ptr", "void *", 40, 8, false, -1, false },
		{ "ints", "__data_loc u32[]", 48, 4, false, 0, true },
		{ "bytes", "__data_loc uint8_t[]", 52, 4, false, 0, true },
	};
	static const uint8_t name[] = { 0xc3, 0xa9, 'x', 0xff, 0, 'z' };
	static const uint8_t vals[] = { 1, 0, 0x34, 0x12, 0xff, 0xff };
	static const uint8_t ints[] = { 1, 0, 0, 0, 2, 0, 0, 0 };
	static const uint8_t bytes[] = { 0, 1, 128, 255 };
	Ringtap__Field fields[ARRAY_SIZE(spec)], *field_ptrs[ARRAY_SIZE(spec)];
	Ringtap__Schema schema = RINGTAP__SCHEMA__INIT;
	struct rec_spec rs = { .ts = 1700000000000000042ULL, .id = 9, .pid = 42, .n_vals = 8 };
	Ringtap__Value *ptrs[12];
	Ringtap__Record rec;
	Ringtap__Lost lost = RINGTAP__LOST__INIT;
	struct ringtap_event ev = { .kind = RINGTAP_RECORD, .cpu = 12 };
	const char *text = "1700000000.000000042 [012] ringtap_test:values pid=42 seq=7 delta=-3 "
			   "tag=a\\x5cb\\x01\\x0a name=\\xc3\\xa9x\\xff vals={1,4660,65535} "
			   "ptr=0xffffffff81000000 ints={1,2} bytes={0,1,128,255}";
	char small[16];

	make_fields(fields, field_ptrs, spec, ARRAY_SIZE(spec));
	schema.event_id = 9;
	schema.system = "ringtap_test";
	schema.name = "values";
	schema.n_fields = ARRAY_SIZE(spec);
	schema.fields = field_ptrs;
	rs.vals[0] = val_u(7);
	rs.vals[1] = val_s(-3);
	rs.vals[2] = val_str("a\\b\x01\n");
	rs.vals[3] = val_raw(name, sizeof(name));
	rs.vals[4] = val_raw(vals, sizeof(vals));
	rs.vals[5] = val_u(0xffffffff81000000ULL);
	rs.vals[6] = val_raw(ints, sizeof(ints));
	rs.vals[7] = val_raw(bytes, sizeof(bytes));
	make_record(&rec, ptrs, &rs);
	ev.record = &rec;
	ev.schema = &schema;

	CHECK_STR(format(NULL, &ev, 0), text);
	CHECK_STR(format(NULL, &ev, RINGTAP_FORMAT_NO_TIME),
		  text + strlen("1700000000.000000042 "));
	/* The name's bytes: UTF-8 as is, the stray 0xff escaped, the NUL ends it. */
	CHECK_STR(format(NULL, &ev, RINGTAP_FORMAT_JSON),
		  "{\"ts\":1700000000000000042,\"cpu\":12,\"event\":\"ringtap_test:values\","
		  "\"pid\":42,\"fields\":{\"seq\":7,\"delta\":-3,\"tag\":\"a\\\\b\\u0001\\n\","
		  "\"name\":\"\xc3\xa9x\\u00ff\",\"vals\":[1,4660,65535],"
		  "\"ptr\":18446744071578845184,\"ints\":[1,2],\"bytes\":[0,1,128,255]}}");

	/* snprintf's contract: the whole length, a terminated prefix. */
	CHECK_EQ(ringtap_format_event(NULL, &ev, small, sizeof(small), 0), strlen(text));
	CHECK_STR(small, "1700000000.0000");
	CHECK_EQ(ringtap_format_event(NULL, &ev, NULL, 0, 0), strlen(text));

	/* A fixed field outside the record comes as empty bytes. */
	rs.vals[4] = val_raw(NULL, 0);
	rs.vals[6] = val_raw(NULL, 0);
	CHECK(strstr(format(NULL, &ev, 0), " vals=<out of record> ptr=") != NULL);
	CHECK(strstr(format(NULL, &ev, 0), " ints={} bytes=") != NULL);
	CHECK(strstr(format(NULL, &ev, RINGTAP_FORMAT_JSON), "\"vals\":null,") != NULL);

	ev = (struct ringtap_event){ .kind = RINGTAP_LOST, .cpu = 3, .lost = &lost };
	lost.cpu = 3;
	lost.count = 815;
	lost.source = RINGTAP__LOSS_SOURCE__QUEUE;
	CHECK_STR(format(NULL, &ev, 0), "# cpu 3: lost 815 events (queue)");
	CHECK_STR(format(NULL, &ev, RINGTAP_FORMAT_JSON),
		  "{\"lost\":815,\"cpu\":3,\"source\":\"queue\"}");
	lost.source = RINGTAP__LOSS_SOURCE__MALFORMED;
	lost.has_count_exact = true;
	lost.count_exact = false;
	CHECK_STR(format(NULL, &ev, 0), "# cpu 3: lost at least 815 events (malformed)");
	CHECK_STR(format(NULL, &ev, RINGTAP_FORMAT_JSON),
		  "{\"lost\":815,\"cpu\":3,\"source\":\"malformed\",\"exact\":false}");
	ev.kind = RINGTAP_END;
	CHECK_EQ(ringtap_format_event(NULL, &ev, small, sizeof(small), 0), -EINVAL);
}

/* The command line client. */
struct run {
	int status;		/* exit code, or 128 + signal */
	char *out, *err;
};

/* The file's text; "" while it does not exist yet. */
static char *slurp(const char *path)
{
	size_t len;
	char *s = access(path, F_OK) ? NULL : read_whole_file(path, &len);

	return s ? s : strdup("");
}

/*
 * Runs ringtap with args, output to files. With wait_for, sends SIGTERM once
 * standard output holds that text.
 */
static void run_cli(struct run *r, const char *const *args, const char *wait_for)
{
	char out_path[300], err_path[300];
	const char *argv[16] = { cli_path };
	int64_t start = now_ms();
	bool signalled = false;
	int status = 0;
	pid_t pid;

	for (size_t i = 0; args[i] && i + 2 < ARRAY_SIZE(argv); i++)
		argv[i + 1] = args[i];
	snprintf(out_path, sizeof(out_path), "%s/out", tmpdir);
	snprintf(err_path, sizeof(err_path), "%s/err", tmpdir);
	/* Not the last run's output, when waiting for this one's. */
	unlink(out_path);
	unlink(err_path);
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(127);
		execv(cli_path, (char *const *)argv);
		_exit(127);
	}
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid)
			break;
		if (now_ms() - start > 20000) {
			fprintf(stderr, "ringtap %s: still running, killed\n", args[0]);
			kill(pid, SIGKILL);
		} else if (wait_for && !signalled) {
			char *o = slurp(out_path);

			if (strstr(o, wait_for)) {
				kill(pid, SIGTERM);
				signalled = true;
			}
			free(o);
		}
		usleep(10000);
	}
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	r->out = slurp(out_path);
	r->err = slurp(err_path);
}

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

static void cli_script(struct script *s)
{
	struct rec_spec recs[2];

	add_welcome(s, 2, false);
	add_schema(s, RTT_ID, "ringtap_test", "ringtap_test", rtt_spec, ARRAY_SIZE(rtt_spec));
	add_lost(s, 0, 5, RINGTAP__LOSS_SOURCE__KERNEL);
	rtt_records(recs);
	recs[1].n_common = 0;
	add_batch(s, 1, recs, 2);
}

static const char cli_text[] =
	"# cpu 0: lost 5 events (kernel)\n"
	"1700000000.123456789 [001] ringtap_test:ringtap_test pid=42 seq=0 cpu=1 tag=rtaptest "
	"msg=cpu1 seq 0 \n"
	"1700000001.000000005 [001] ringtap_test:ringtap_test pid=43 seq=1 cpu=1 tag=rtaptest "
	"msg=cpu1 seq 1 \n";

static void check_cli_hello(const struct fake *fk, const char *const *events, bool ring)
{
	const Ringtap__Frame *f = fk->hello;

	CHECK(f && !strncmp(f->hello->client_name, "ringtap ", 8));
	/* ringtap stream asks for the ring first unless told not to, the socket its fallback. */
	CHECK(f && ring == (f->hello->has_transport &&
			    f->hello->transport == RINGTAP__TRANSPORT__RING));
	if (f)
		check_hello(f, f->hello->client_name, events, false);
}

static void test_cli_stream(void)
{
	static const char *const default_events[] = { "ringtap_test:*", NULL };
	static const char *const two_events[] = { "sched:*", "ringtap_test:ringtap_test", NULL };
	struct fake fk = { 0 };
	struct run r;

	/* To the end: the daemon ends the stream with its Bye. */
	cli_script(&fk.script);
	add_bye(&fk.script);
	fake_start(&fk, false);
	run_cli(&r, (const char *const[]){ "stream", "-s", sock_path, NULL }, NULL);
	fake_finish(&fk);
	CHECK_EQ(r.status, 0);
	CHECK_STR(r.out, cli_text);
	CHECK_STR(r.err, "ringtap: ringtapd ended the stream\n"
			 "ringtap: 2 records, 5 lost\n");
	check_cli_hello(&fk, default_events, true);
	CHECK(fk.bye);
	fake_free(&fk);
	run_free(&r);

	/* Cut without a Bye: the stream itself says its end is unsure, and so does the exit (3). */
	cli_script(&fk.script);
	fake_start(&fk, false);
	run_cli(&r, (const char *const[]){ "stream", "-s", sock_path, NULL }, NULL);
	fake_finish(&fk);
	CHECK_EQ(r.status, 3);
	CHECK(!strncmp(r.out, cli_text, sizeof(cli_text) - 1));
	CHECK_STR(r.out + (strlen(r.out) >= sizeof(cli_text) - 1 ? sizeof(cli_text) - 1 : 0),
		  "# end: the connection was cut before ringtapd's last report; losses at the "
		  "end, if any, are not counted\n");
	CHECK_STR(r.err, "ringtap: the connection to ringtapd was cut\n"
			 "ringtap: 2 records, 5 lost\n");
	fake_free(&fk);
	run_free(&r);

	/* --count, while the daemon would go on. */
	cli_script(&fk.script);
	fake_start(&fk, true);
	run_cli(&r, (const char *const[]){ "stream", "--socket", sock_path, "-e",
					   "sched:*,ringtap_test:ringtap_test", "--count", "1",
					   "--no-time", "--transport=socket", NULL }, NULL);
	fake_finish(&fk);
	CHECK_EQ(r.status, 0);
	CHECK_STR(r.out, "# cpu 0: lost 5 events (kernel)\n"
			 "[001] ringtap_test:ringtap_test pid=42 seq=0 cpu=1 tag=rtaptest "
			 "msg=cpu1 seq 0 \n");
	CHECK_STR(r.err, "ringtap: 1 records, 5 lost\n");
	check_cli_hello(&fk, two_events, false);
	fake_free(&fk);
	run_free(&r);

	/* --json and --common. */
	cli_script(&fk.script);
	add_bye(&fk.script);
	fake_start(&fk, false);
	run_cli(&r, (const char *const[]){ "stream", "-s", sock_path, "--json", "--common",
					   "--cpus", "1,3-4", "-p", "42,7", NULL }, NULL);
	fake_finish(&fk);
	CHECK_EQ(r.status, 0);
	CHECK_STR(r.out, "{\"lost\":5,\"cpu\":0,\"source\":\"kernel\"}\n"
			 "{\"ts\":1700000000123456789,\"cpu\":1,"
			 "\"event\":\"ringtap_test:ringtap_test\",\"pid\":42,"
			 "\"fields\":{\"seq\":0,\"cpu\":1,\"tag\":\"rtaptest\","
			 "\"msg\":\"cpu1 seq 0 \"}}\n"
			 "{\"ts\":1700000001000000005,\"cpu\":1,"
			 "\"event\":\"ringtap_test:ringtap_test\",\"pid\":43,"
			 "\"fields\":{\"seq\":1,\"cpu\":1,\"tag\":\"rtaptest\","
			 "\"msg\":\"cpu1 seq 1 \"}}\n");
	if (fk.hello && fk.hello->hello->subscription) {
		const Ringtap__Subscription *sub = fk.hello->hello->subscription;

		CHECK(sub->common_fields);
		CHECK_EQ(sub->n_cpus, 3);
		CHECK(sub->n_cpus == 3 && sub->cpus[0] == 1 && sub->cpus[1] == 3 &&
		      sub->cpus[2] == 4);
		CHECK_EQ(sub->n_pids, 2);
		CHECK(sub->n_pids == 2 && sub->pids[0] == 42 && sub->pids[1] == 7);
	} else {
		CHECK(!"no subscription");
	}
	fake_free(&fk);
	run_free(&r);

	/* --duration. */
	cli_script(&fk.script);
	fake_start(&fk, true);
	{
		int64_t t0 = now_ms(), dt;

		run_cli(&r, (const char *const[]){ "stream", "-s", sock_path, "-d", "0.3", NULL },
			NULL);
		dt = now_ms() - t0;
		CHECK(dt >= 300 && dt < 10000);
	}
	fake_finish(&fk);
	CHECK_EQ(r.status, 0);
	CHECK_STR(r.out, cli_text);
	CHECK_STR(r.err, "ringtap: 2 records, 5 lost\n");
	CHECK(fk.bye);
	fake_free(&fk);
	run_free(&r);

	/* SIGTERM once the records are out. */
	cli_script(&fk.script);
	fake_start(&fk, true);
	run_cli(&r, (const char *const[]){ "stream", "-s", sock_path, NULL }, "seq 1 \n");
	fake_finish(&fk);
	CHECK_EQ(r.status, 0);
	CHECK_STR(r.out, cli_text);
	CHECK_STR(r.err, "ringtap: 2 records, 5 lost\n");
	fake_free(&fk);
	run_free(&r);
}

/* The globs the fake's Hello asked, against want. */
static void check_hello_events(const struct fake *fk, const char *const *want, size_t n)
{
	const Ringtap__Subscription *sub =
		fk->hello && fk->hello->hello ? fk->hello->hello->subscription : NULL;

	CHECK(sub != NULL);
	if (!sub)
		return;
	CHECK_EQ(sub->n_events, n);
	for (size_t i = 0; i < n && i < sub->n_events; i++)
		CHECK_STR(sub->events[i], want[i]);
}

/*
 * -e given twice adds up, in stream and record alike, and a long list is
 * asked whole: record once kept the last -e's first 32 globs.
 */
static void test_cli_events_add_up(void)
{
	enum { N = 40 };
	static char names[N][24];
	const char *want[N];
	char first[N * 24] = "", second[N * 24] = "", out[300];
	struct fake fk = { 0 };
	struct run r;

	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "sys%d:event_%d", i % 3, i);
		want[i] = names[i];
		strcat(i < N / 2 ? first : second, names[i]);
		strcat(i < N / 2 ? first : second, i == N / 2 - 1 || i == N - 1 ? "" : ",");
	}
	snprintf(out, sizeof(out), "%s/rec.pb", tmpdir);
	cli_script(&fk.script);
	fake_start(&fk, false);
	run_cli(&r, (const char *const[]){ "record", "-o", out, "-s", sock_path, "-e", first,
					   "-e", second, NULL }, NULL);
	fake_finish(&fk);
	check_hello_events(&fk, want, N);
	fake_free(&fk);
	run_free(&r);
	unlink(out);

	cli_script(&fk.script);
	add_bye(&fk.script);
	fake_start(&fk, false);
	run_cli(&r, (const char *const[]){ "stream", "-s", sock_path, "-e", first, "-e",
					   second, NULL }, NULL);
	fake_finish(&fk);
	CHECK_EQ(r.status, 0);
	check_hello_events(&fk, want, N);
	fake_free(&fk);
	run_free(&r);
}

static void test_cli_errors(void)
{
	struct fake fk = { 0 };
	char none[300], want[512];
	struct run r;

	add_refusal(&fk.script, RINGTAP__REFUSAL_REASON__UNKNOWN_EVENT,
		    "no event matches nosuch:*");
	fake_start(&fk, false);
	run_cli(&r, (const char *const[]){ "stream", "-s", sock_path, "-e", "nosuch:*", NULL },
		NULL);
	fake_finish(&fk);
	CHECK_EQ(r.status, 1);
	CHECK_STR(r.out, "");
	CHECK_STR(r.err, "ringtap: ringtapd refused the connection (UNKNOWN_EVENT): "
			 "no event matches nosuch:*\n");
	fake_free(&fk);
	run_free(&r);

	/* A stream that breaks: exit 1 with the reason. */
	add_welcome(&fk.script, 2, false);
	record_before_schema(&fk.script);
	fake_start(&fk, false);
	run_cli(&r, (const char *const[]){ "stream", "-s", sock_path, NULL }, NULL);
	fake_finish(&fk);
	CHECK_EQ(r.status, 1);
	CHECK_STR(r.err, "ringtap: a Record of event id 169 before its Schema\n"
			 "ringtap: 0 records, 0 lost\n");
	fake_free(&fk);
	run_free(&r);

	snprintf(none, sizeof(none), "%s/none.sock", tmpdir);
	run_cli(&r, (const char *const[]){ "stream", "-s", none, NULL }, NULL);
	CHECK_EQ(r.status, 1);
	snprintf(want, sizeof(want),
		 "ringtap: cannot connect to %s: No such file or directory "
		 "(is ringtapd running?)\n", none);
	CHECK_STR(r.err, want);
	run_free(&r);

	run_cli(&r, (const char *const[]){ "stream", "--bogus", NULL }, NULL);
	CHECK_EQ(r.status, 1);
	CHECK_STR(r.err, "ringtap stream: unknown option --bogus (see ringtap stream --help)\n");
	run_free(&r);

	run_cli(&r, (const char *const[]){ "stream", "--count", NULL }, NULL);
	CHECK_EQ(r.status, 1);
	CHECK_STR(r.err,
		  "ringtap stream: option --count needs a value (see ringtap stream --help)\n");
	run_free(&r);

	run_cli(&r, (const char *const[]){ "stream", "-n", "x", NULL }, NULL);
	CHECK_EQ(r.status, 1);
	CHECK_STR(r.err, "ringtap stream: --count wants a positive number, not 'x'\n");
	run_free(&r);

	run_cli(&r, (const char *const[]){ "stream", "--cpus", "1,", NULL }, NULL);
	CHECK_EQ(r.status, 1);
	CHECK_STR(r.err, "ringtap stream: --cpus wants CPU numbers like 0,2-3, not '1,'\n");
	run_free(&r);

	run_cli(&r, (const char *const[]){ "frobnicate", NULL }, NULL);
	CHECK_EQ(r.status, 1);
	CHECK_STR(r.err, "ringtap: unknown command 'frobnicate' (see ringtap --help)\n");
	run_free(&r);

	run_cli(&r, (const char *const[]){ NULL }, NULL);
	CHECK_EQ(r.status, 1);
	CHECK(strstr(r.err, "Usage: ringtap") != NULL);
	run_free(&r);
}

static void test_cli_info_help(void)
{
	struct fake fk = { 0 };
	struct run r;

	add_welcome(&fk.script, 2, false);
	fake_start(&fk, false);
	run_cli(&r, (const char *const[]){ "info", "-s", sock_path, NULL }, NULL);
	fake_finish(&fk);
	CHECK_EQ(r.status, 0);
	CHECK_STR(r.err, "");
	CHECK(strstr(r.out, "host:           testhost\n") != NULL);
	CHECK(strstr(r.out, "kernel:         6.1.0-ringtap\n") != NULL);
	CHECK(strstr(r.out, "trace clock:    local\n") != NULL);
	CHECK(strstr(r.out, "CPUs:           2\n") != NULL);
	CHECK(strstr(r.out, "sub-buffer:     4096 bytes\n") != NULL);
	CHECK(strstr(r.out, "long size:      8 bytes\n") != NULL);
	CHECK(strstr(r.out, "endianness:     little\n") != NULL);
	CHECK(strstr(r.out,
		     "common fields:\n"
		     "  common_type              offset   0  size    2  unsigned  unsigned short\n"
		     "  common_flags             offset   2  size    1  unsigned  unsigned char\n"
		     "  common_preempt_count     offset   3  size    1  unsigned  unsigned char\n"
		     "  common_pid               offset   4  size    4  signed  int\n") != NULL);
	CHECK(strstr(r.out, "header_page:\n"
			    "  \tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
			    "  \tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n") != NULL);
	/* info subscribes to nothing: a Welcome is all it wants. */
	check_cli_hello(&fk, (const char *const[]){ NULL }, false);
	CHECK(fk.bye);
	fake_free(&fk);
	run_free(&r);

	run_cli(&r, (const char *const[]){ "--help", NULL }, NULL);
	CHECK_EQ(r.status, 0);
	CHECK(!strncmp(r.out, "Usage: ringtap [--help|--version] COMMAND", 41));
	run_free(&r);
	run_cli(&r, (const char *const[]){ "stream", "--help", NULL }, NULL);
	CHECK_EQ(r.status, 0);
	CHECK(!strncmp(r.out, "Usage: ringtap stream [OPTIONS]\n", 32));
	run_free(&r);
	run_cli(&r, (const char *const[]){ "info", "-h", NULL }, NULL);
	CHECK_EQ(r.status, 0);
	CHECK(!strncmp(r.out, "Usage: ringtap info [OPTIONS]\n", 30));
	run_free(&r);
	run_cli(&r, (const char *const[]){ "--version", NULL }, NULL);
	CHECK_EQ(r.status, 0);
	CHECK(!strncmp(r.out, "ringtap ", 8) && strchr(r.out, '\n') == r.out + strlen(r.out) - 1);
	run_free(&r);
}


/* What a DECODED subscriber of ringtap_test:* with common fields prints of one record, as JSON. */
struct ring_want {
	struct rt_record_encoder *enc;
	const Ringtap__Layout *layout;
	const Ringtap__Schema *schema;
	char *text;
	size_t len;
};

static int ring_want_record(const struct rt_record *rec, void *ctx)
{
	struct ring_want *w = ctx;
	struct rt_buf frame = { 0 };
	struct rt_record_view view;
	struct rt_value vals[64];
	char line[2048];
	int n;

	if (!rec->event || strcmp(rec->event->system, "ringtap_test"))
		return 0;
	sent_view(w->enc, rec, &frame, &view, vals, 64);
	n = rt_format_view(line, sizeof(line), w->layout, rec->cpu, &view, w->schema,
			   RT_FORMAT_JSON);
	w->text = realloc(w->text, w->len + (size_t)n + 2);
	memcpy(w->text + w->len, line, (size_t)n);
	w->len += (size_t)n;
	w->text[w->len++] = '\n';
	w->text[w->len] = '\0';
	rt_buf_free(&frame);
	return 0;
}

/*
 * The RING transport against a fake ringtapd that serves the stock tree's
 * pages from a page ring in a memfd passed with the Ring frame: the Hello
 * asks version 2 and RAW, the records come as views with their DECODED
 * Schemas, and print what a DECODED subscriber prints of the same pages.
 */
static void test_ring(const char *fixtures)
{
	static const char *const every[] = { "*:*", NULL };
	static const char *const events[] = { "ringtap_test:*", "ringtap_ptr:*", NULL };
	static const char kallsyms[] = "ffffffff81234560 T hrtimer_wakeup\n";
	struct rt_host host = { "testhost", "6.1.0-ringtap", "b00t", 2, "local" };
	struct rt_host_texts texts = { .kallsyms = kallsyms, .kallsyms_len = sizeof(kallsyms) - 1 };
	Ringtap__Schema ptr_schema = RINGTAP__SCHEMA__INIT;
	struct ringtap_client_opts opts = opts_for(events);
	struct ring_want want = { 0 };
	uint64_t zeros[2] = { 0, 0 }, before[2] = { 0, 0 }, written[2];
	uint32_t cpus[2] = { 0, 1 };
	Ringtap__Ring ring_msg = RINGTAP__RING__INIT;
	Ringtap__RingReady note = RINGTAP__RING_READY__INIT;
	Ringtap__Bye bye = RINGTAP__BYE__INIT;
	Ringtap__Heartbeat hb = RINGTAP__HEARTBEAT__INIT;
	Ringtap__Frame f = RINGTAP__FRAME__INIT, *schema_frame = NULL;
	struct ringtap_connect_error err;
	struct rt_ring_geometry g;
	struct ringtap_client *c = NULL;
	struct ringtap_event ev;
	struct rt_ring ring;
	struct fixture fx;
	struct fake fk = { 0 };
	struct rt_buf b = { 0 };
	char *got = NULL, line[2048];
	size_t got_len = 0, size;
	Ringtap__Welcome *welcome;
	const uint8_t *msg;
	size_t len;
	void *area;
	int fd;

	if (fixture_open(&fx, fixtures, "stock", every)) {
		CHECK(!"the stock fixture opens");
		return;
	}
	/* The Welcome, and a RAW Schema of every event, once each. */
	CHECK_EQ(rt_encode_welcome_frame(2, RINGTAP__ENCODING__RAW, &host, fx.layout, &b), 0);
	add_bytes(&fk.script, b.data, b.len);
	CHECK_EQ(rt_encode_inner(&b, true, &msg, &len), 0);
	welcome = ringtap__welcome__unpack(NULL, len, msg);
	for (int i = 0; i < tep_get_events_count(fx.layout->tep); i++) {
		struct tep_event *e = tep_get_event(fx.layout->tep, i);

		if (tep_find_event(fx.layout->tep, e->id) != e)
			continue;
		b.len = 0;
		CHECK_EQ(rt_encode_schema_frame(e, NULL, rt_layout_format(fx.layout, e->id), NULL,
						&b), 0);
		add_bytes(&fk.script, b.data, b.len);
		if (!strcmp(e->system, "ringtap_test")) {
			struct rt_buf d = { 0 };
			uint64_t flen;
			int used;

			CHECK_EQ(rt_encode_schema_frame(e, NULL, NULL, NULL, &d), 0);
			used = rt_wire_varint_decode(d.data, d.len, &flen);
			schema_frame = ringtap__frame__unpack(NULL, flen, d.data + used);
			rt_buf_free(&d);
		}
	}
	/* An event with a pointer field: the client asks for kallsyms once it has the Ring. */
	ptr_schema.event_id = 4001;
	ptr_schema.system = "ringtap_ptr";
	ptr_schema.name = "ptr_test";
	ptr_schema.format = (char *)pointer_format;
	f.msg_case = RINGTAP__FRAME__MSG_SCHEMA;
	f.schema = &ptr_schema;
	add_frame(&fk.script, &f);
	/* The ring, every page of the tree in it, in a memfd passed with the Ring frame. */
	g = (struct rt_ring_geometry){ 2, 8, fx.layout->sub_buffer_size };
	size = rt_ring_size(&g);
	fd = memfd_create("ring", MFD_CLOEXEC);
	CHECK(fd >= 0 && !ftruncate(fd, (off_t)size));
	area = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(area != MAP_FAILED);
	CHECK_EQ(rt_ring_format(&ring, area, size, &g), 0);
	want.layout = welcome ? welcome->layout : NULL;
	want.schema = schema_frame ? schema_frame->schema : NULL;
	CHECK_EQ(rt_record_encoder_new(&want.enc, fx.layout, true, NULL), 0);
	for (unsigned int cpu = 0; cpu < 2; cpu++) {
		uint8_t *pages = fixture_pages(&fx, (int)cpu, &len);

		for (size_t off = 0; pages && off + g.page_size <= len; off += g.page_size) {
			struct rt_ring_page_info info = { .len = g.page_size };
			struct rt_page_result res;

			rt_decode_page(fx.decoder, cpu, pages + off, g.page_size, ring_want_record,
				       &want, &res);
			memcpy(rt_ring_begin(&ring, cpu), pages + off, g.page_size);
			info.records = res.records;
			info.events_before = before[cpu];
			before[cpu] += res.records;
			rt_ring_commit(&ring, cpu, &info);
		}
		free(pages);
		written[cpu] = rt_ring_written(&ring, cpu);
	}
	/* A Heartbeat before the Ring frame, as ringtapd sends one at once: an event all the same. */
	hb.trace_clock_ns = 12345;
	f.msg_case = RINGTAP__FRAME__MSG_HEARTBEAT;
	f.heartbeat = &hb;
	add_frame(&fk.script, &f);
	fk.pass_at = fk.script.len;
	fk.pass_fd = fd;
	ring_msg.size = size;
	ring_msg.n_start_page = ring_msg.n_events_before = ring_msg.n_kernel_lost =
		ring_msg.n_kernel_inexact = ring_msg.n_malformed = 2;
	ring_msg.start_page = ring_msg.events_before = ring_msg.kernel_lost =
		ring_msg.kernel_inexact = ring_msg.malformed = zeros;
	f.msg_case = RINGTAP__FRAME__MSG_RING;
	f.ring = &ring_msg;
	add_frame(&fk.script, &f);
	/* What the client's Update for kallsyms brings (the fake sends it regardless). */
	b.len = 0;
	CHECK_EQ(rt_encode_host_texts_frame(&texts, &b), 0);
	add_bytes(&fk.script, b.data, b.len);
	note.n_cpus = note.n_written = 2;
	note.cpus = cpus;
	note.written = written;
	f.msg_case = RINGTAP__FRAME__MSG_RING_READY;
	f.ring_ready = &note;
	add_frame(&fk.script, &f);
	f.msg_case = RINGTAP__FRAME__MSG_BYE;
	f.bye = &bye;
	add_frame(&fk.script, &f);

	fake_start(&fk, false);
	opts.transport = RINGTAP_TRANSPORT_RING;
	opts.common_fields = true;
	CHECK_EQ(ringtap_connect(&c, &opts, &err), 0);
	CHECK_STR(err.text, "");
	CHECK(c && ringtap_uses_ring(c));
	if (c) {
		ringtap_set_record_views(c, true);
		CHECK_EQ(ringtap_next(c, &ev, 1000), 1);
		CHECK_EQ(ev.kind, RINGTAP_HEARTBEAT);
		CHECK(ev.heartbeat && ev.heartbeat->trace_clock_ns == 12345);
		while (ringtap_next(c, &ev, 1000) == 1 && ev.kind != RINGTAP_END) {
			int n;

			CHECK_EQ(ev.kind, RINGTAP_RECORD);
			CHECK(ev.record == NULL && ev.schema && ringtap_record_view(c, &ev));
			n = ringtap_format_event(c, &ev, line, sizeof(line), RINGTAP_FORMAT_JSON);
			got = realloc(got, got_len + (size_t)n + 2);
			memcpy(got + got_len, line, (size_t)n);
			got_len += (size_t)n;
			got[got_len++] = '\n';
			got[got_len] = '\0';
		}
		CHECK_EQ(ev.kind, RINGTAP_END);
		CHECK(ev.end_clean);
		CHECK_STR(ringtap_error_text(c), "");
		CHECK_EQ(ringtap_find_schema(c, "ringtap_test", "ringtap_test") != NULL, 1);
		ringtap_close(c);
	}
	fake_finish(&fk);
	CHECK(want.len > 0);
	CHECK_STR(got ? got : "", want.text ? want.text : "");
	/* Version 2, RAW after the encoding asked, the ring. */
	CHECK(fk.hello && fk.hello->hello->min_version == 2 && fk.hello->hello->max_version == 2 &&
	      fk.hello->hello->n_encodings == 2 &&
	      fk.hello->hello->encodings[1] == RINGTAP__ENCODING__RAW &&
	      fk.hello->hello->has_transport &&
	      fk.hello->hello->transport == RINGTAP__TRANSPORT__RING);
	/* The Update that asked for kallsyms, and the Bye. */
	CHECK_EQ(fk.n_after, 2);
	CHECK_EQ(fk.updates_for_texts, 1);
	fake_free(&fk);
	free(got);
	free(want.text);
	rt_record_encoder_free(want.enc);
	if (schema_frame)
		ringtap__frame__free_unpacked(schema_frame, NULL);
	if (welcome)
		ringtap__welcome__free_unpacked(welcome, NULL);
	munmap(area, size);
	close(fd);
	rt_buf_free(&b);
	fixture_close(&fx);
}

int main(int argc, char **argv)
{
	char path[300];

	/* A client that dies mid-test must not take the fake daemon with it. */
	signal(SIGPIPE, SIG_IGN);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(sock_path, sizeof(sock_path), "%s/ringtapd.sock", tmpdir);
	cli_path = argc > 1 ? argv[1] : NULL;

	test_format();
	test_stream();
	test_refusals();
	test_bad_streams();
	test_bad_answers();
	test_no_daemon();
	test_timeout();
	test_heartbeat_error();
	test_many();
	test_big_endian();
	if (argc > 2)
		test_ring(argv[2]);
	else
		printf("test-client: no fixture directory given, the ring's test skipped\n");
	if (cli_path) {
		test_cli_stream();
		test_cli_events_add_up();
		test_cli_errors();
		test_cli_info_help();
	} else {
		printf("test-client: no ringtap executable given, its tests skipped\n");
	}

	snprintf(path, sizeof(path), "%s/out", tmpdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/err", tmpdir);
	unlink(path);
	rmdir(tmpdir);
	return check_exit("test-client");
}
