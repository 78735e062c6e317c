// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * garbage-clients: connects N times to ringtapd and misbehaves in six ways,
 * checking each answer: random bytes, an oversized length, a frame cut off
 * mid-way, an unknown version, an unknown event, a Hello and gone. Then a RAW
 * subscription asks for a projection (refused), two Updates are refused (each
 * must say why), bad subscriptions are refused alike in a Hello and in an
 * Update, and 100 connections at once each send half a Hello and wait.
 *
 * Every connection is accounted for as docs/PROTOCOL.md says, none skipped:
 * each gets the one answer its bytes call for (the random ones are read
 * here as the protocol reads them: a length varint, at most 64 KiB, a Frame
 * with a message, a Hello first), then the close; a frame cut off and the
 * peer's side shut, the close alone; random bytes that end inside a frame,
 * ETIMEDOUT when their Hello is due. In the flood, those and the flood's
 * first connections up to MAX_CLIENTS + 16 are held waiting for their Hello
 * and told ETIMEDOUT 10 to 15 s after connecting; the rest, exactly, are
 * turned away at once with TOO_MANY_CLIENTS. Last, peers that end their
 * side and read on still get what they are owed: an Error, a Refusal, the
 * rest of a stream after their Bye with our Bye last.
 *
 * usage: garbage-clients SOCKET N MAX_CLIENTS (the daemon's --max-clients)
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "dial.h"
#include "util.h"
#include "wire.h"

static void send_hello_as(int fd, uint32_t lo, uint32_t hi, const char *event,
			  Ringtap__Encoding enc, const char *field)
{
	Ringtap__Frame f = RINGTAP__FRAME__INIT;
	Ringtap__Hello h = RINGTAP__HELLO__INIT;
	Ringtap__Subscription sub = RINGTAP__SUBSCRIPTION__INIT;
	char *events[1] = { (char *)event };
	char *fields[1] = { (char *)field };
	uint8_t *buf;
	size_t len;

	h.min_version = lo;
	h.max_version = hi;
	h.n_encodings = 1;
	h.encodings = &enc;
	h.client_name = "garbage";
	sub.n_events = 1;
	sub.events = events;
	sub.n_fields = field != NULL;
	sub.fields = fields;
	h.subscription = &sub;
	f.msg_case = RINGTAP__FRAME__MSG_HELLO;
	f.hello = &h;
	if (rt_wire_encode(&f, &buf, &len) || write(fd, buf, len) != (ssize_t)len)
		exit(1);
	free(buf);
}

static void send_hello(int fd, uint32_t lo, uint32_t hi, const char *event)
{
	send_hello_as(fd, lo, hi, event, RINGTAP__ENCODING__DECODED, NULL);
}

/*
 * The first frame the daemon sends back, then whether it closed: 0 if not within
 * wait_ms. An Error's code goes to *error.
 */
static Ringtap__Frame__MsgCase answer(int fd, int wait_ms, bool *closed,
				      Ringtap__RefusalReason *reason, uint32_t *error)
{
	struct rt_wire_reader r;
	Ringtap__Frame__MsgCase got = RINGTAP__FRAME__MSG__NOT_SET;
	struct pollfd p = { fd, POLLIN, 0 };

	*closed = false;
	rt_wire_reader_init(&r, 0);
	while (poll(&p, 1, wait_ms) == 1) {
		uint8_t buf[4096];
		ssize_t n = read(fd, buf, sizeof(buf));
		size_t used;
		Ringtap__Frame *f;

		if (n <= 0) {
			*closed = true;
			break;
		}
		if (got != RINGTAP__FRAME__MSG__NOT_SET)
			continue;
		rt_wire_reader_feed(&r, buf, (size_t)n, &used);
		if (rt_wire_reader_next(&r, &f) == 1) {
			got = f->msg_case;
			if (got == RINGTAP__FRAME__MSG_REFUSAL)
				*reason = f->refusal->reason;
			if (got == RINGTAP__FRAME__MSG_ERROR)
				*error = f->error->code;
			ringtap__frame__free_unpacked(f, NULL);
		}
	}
	rt_wire_reader_release(&r);
	return got;
}

/* The last frame before the daemon closed (NOT_SET: none, or no close within wait_ms). */
static Ringtap__Frame__MsgCase last_frame(int fd, int wait_ms)
{
	struct rt_wire_reader r;
	Ringtap__Frame__MsgCase last = RINGTAP__FRAME__MSG__NOT_SET;
	struct pollfd p = { fd, POLLIN, 0 };
	bool closed = false;

	rt_wire_reader_init(&r, 0);
	while (!closed && poll(&p, 1, wait_ms) == 1) {
		uint8_t buf[4096];
		ssize_t n = read(fd, buf, sizeof(buf));
		size_t off = 0, used;
		Ringtap__Frame *f;

		closed = n <= 0;
		while (n > 0 && off < (size_t)n) {
			if (rt_wire_reader_feed(&r, buf + off, (size_t)n - off, &used) < 0)
				break;
			off += used;
			while (rt_wire_reader_next(&r, &f) == 1) {
				last = f->msg_case;
				ringtap__frame__free_unpacked(f, NULL);
			}
		}
	}
	rt_wire_reader_release(&r);
	return closed ? last : RINGTAP__FRAME__MSG__NOT_SET;
}

static void send_bye(int fd)
{
	Ringtap__Frame f = RINGTAP__FRAME__INIT;
	Ringtap__Bye bye = RINGTAP__BYE__INIT;
	uint8_t *buf;
	size_t len;

	f.msg_case = RINGTAP__FRAME__MSG_BYE;
	f.bye = &bye;
	if (rt_wire_encode(&f, &buf, &len) || write(fd, buf, len) != (ssize_t)len)
		exit(1);
	free(buf);
}

static void send_update(int fd, const char *event, bool host_texts)
{
	Ringtap__Frame f = RINGTAP__FRAME__INIT;
	Ringtap__Update u = RINGTAP__UPDATE__INIT;
	Ringtap__Subscription sub = RINGTAP__SUBSCRIPTION__INIT;
	char *events[1] = { (char *)event };
	uint8_t *buf;
	size_t len;

	sub.n_events = 1;
	sub.events = events;
	sub.has_host_texts = host_texts;
	sub.host_texts = host_texts;
	u.subscription = &sub;
	f.msg_case = RINGTAP__FRAME__MSG_UPDATE;
	f.update = &u;
	if (rt_wire_encode(&f, &buf, &len) || write(fd, buf, len) != (ssize_t)len)
		exit(1);
	free(buf);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Up to the close: the first Refusal's reason or Error's code, and its text. */
static Ringtap__Frame__MsgCase told(int fd, uint32_t *reason_or_code, char *text, size_t size)
{
	Ringtap__Frame__MsgCase got = RINGTAP__FRAME__MSG__NOT_SET;
	struct pollfd p = { fd, POLLIN, 0 };
	long end = now_ms() + 5000;
	struct rt_wire_reader r;

	snprintf(text, size, "%s", "");
	*reason_or_code = 0;
	rt_wire_reader_init(&r, 0);
	/* A stream that goes on (the subscription taken) has its Heartbeats: not past 5 s. */
	while (now_ms() < end && poll(&p, 1, (int)(end - now_ms())) == 1) {
		uint8_t buf[4096];
		ssize_t n = read(fd, buf, sizeof(buf));
		size_t used;
		Ringtap__Frame *f;

		if (n <= 0)
			break;
		for (size_t off = 0; off < (size_t)n; off += used) {
			if (rt_wire_reader_feed(&r, buf + off, (size_t)n - off, &used) < 0)
				break;
			while (rt_wire_reader_next(&r, &f) == 1) {
				if (!got && f->msg_case == RINGTAP__FRAME__MSG_REFUSAL) {
					got = f->msg_case;
					*reason_or_code = f->refusal->reason;
					snprintf(text, size, "%s", f->refusal->text);
				} else if (!got && f->msg_case == RINGTAP__FRAME__MSG_ERROR) {
					got = f->msg_case;
					*reason_or_code = f->error->code;
					snprintf(text, size, "%s", f->error->text);
				}
				ringtap__frame__free_unpacked(f, NULL);
			}
		}
	}
	rt_wire_reader_release(&r);
	return got;
}

/*
 * A refused Update ends the stream with an Error that says why, as a refused
 * Hello's Refusal would: the first Error's code and text, "" if none came.
 */
static uint32_t update_refused(const char *path, const char *event, bool host_texts,
			       char *text, size_t size)
{
	int fd = dial(path);
	uint32_t code;

	send_hello(fd, 1, 1, "ringtap_test:*");
	send_update(fd, event, host_texts);
	/* To the close after the Error: the flood counts on this connection being gone. */
	if (told(fd, &code, text, size) != RINGTAP__FRAME__MSG_ERROR)
		code = 0;
	close(fd);
	return code;
}

static unsigned int refused_updates(const char *path)
{
	unsigned int bad = 0;
	uint32_t code;
	char text[256];

	code = update_refused(path, "nosuch:event", false, text, sizeof(text));
	if (code != ENOENT || strcmp(text, "no event matches 'nosuch:event'")) {
		fprintf(stderr, "Update to an unknown event: Error %u '%s'\n", code, text);
		bad++;
	}
	code = update_refused(path, "ringtap_test:*", true, text, sizeof(text));
	if (code != EINVAL || strcmp(text, "host_texts apply to RAW only")) {
		fprintf(stderr, "Update with host_texts on DECODED: Error %u '%s'\n", code, text);
		bad++;
	}
	return bad;
}

/*
 * A subscription the daemon cannot serve is told the same, whether it comes
 * in a Hello or in an Update: the Refusal's reason and the Error's code say
 * the same thing (UNKNOWN_EVENT and ENOENT, BAD_SUBSCRIPTION and EINVAL),
 * with the same text. Options that do not apply to the encoding included.
 */
struct bad_sub {
	const char *what, *event, *filter, *fixed_layout;
	Ringtap__Encoding enc;
	int32_t pid;
	Ringtap__RefusalReason reason;
	const char *text;
};

static const struct bad_sub bad_subs[] = {
	{ "an empty glob", "", NULL, NULL, RINGTAP__ENCODING__DECODED, 0,
	  RINGTAP__REFUSAL_REASON__BAD_SUBSCRIPTION, "an empty event name" },
	{ "an unknown event", "nosuch:event", NULL, NULL, RINGTAP__ENCODING__DECODED, 0,
	  RINGTAP__REFUSAL_REASON__UNKNOWN_EVENT, "no event matches 'nosuch:event'" },
	{ "an unknown fixed_layout", "ringtap_test:*", NULL, "padded-1999",
	  RINGTAP__ENCODING__FIXED, 0, RINGTAP__REFUSAL_REASON__BAD_SUBSCRIPTION,
	  "unknown fixed layout (known: padded-2012)" },
	{ "RAW with a filter", "ringtap_test:*", "common_pid == 1", NULL, RINGTAP__ENCODING__RAW,
	  0, RINGTAP__REFUSAL_REASON__BAD_SUBSCRIPTION, "filter applies to DECODED and FIXED only" },
	{ "RAW with pids", "ringtap_test:*", NULL, NULL, RINGTAP__ENCODING__RAW, 1,
	  RINGTAP__REFUSAL_REASON__BAD_SUBSCRIPTION, "pids apply to DECODED and FIXED only" },
};

/* A Hello with s's subscription (good: the same encoding, a servable one), or an Update with it. */
static void send_sub(int fd, const struct bad_sub *s, bool good, bool update)
{
	Ringtap__Frame f = RINGTAP__FRAME__INIT;
	Ringtap__Hello h = RINGTAP__HELLO__INIT;
	Ringtap__Update u = RINGTAP__UPDATE__INIT;
	Ringtap__Subscription sub = RINGTAP__SUBSCRIPTION__INIT;
	Ringtap__Encoding enc = s->enc;
	char *events[1] = { (char *)(good ? "ringtap_test:*" : s->event) };
	int32_t pids[1] = { s->pid };
	uint8_t *buf;
	size_t len;

	sub.n_events = 1;
	sub.events = events;
	if (!good) {
		sub.filter = (char *)s->filter;
		sub.fixed_layout = (char *)s->fixed_layout;
		sub.n_pids = s->pid != 0;
		sub.pids = pids;
	}
	h.min_version = 1;
	h.max_version = 1;
	h.n_encodings = 1;
	h.encodings = &enc;
	h.client_name = "garbage";
	h.subscription = &sub;
	u.subscription = &sub;
	f.msg_case = update ? RINGTAP__FRAME__MSG_UPDATE : RINGTAP__FRAME__MSG_HELLO;
	if (update)
		f.update = &u;
	else
		f.hello = &h;
	if (rt_wire_encode(&f, &buf, &len) || write(fd, buf, len) != (ssize_t)len)
		exit(1);
	free(buf);
}

static uint32_t code_of(Ringtap__RefusalReason reason)
{
	return reason == RINGTAP__REFUSAL_REASON__UNKNOWN_EVENT ? ENOENT :
	       reason == RINGTAP__REFUSAL_REASON__NOT_AUTHORIZED ? EACCES : EINVAL;
}

static unsigned int hello_as_update(const char *path)
{
	unsigned int bad = 0;

	for (size_t i = 0; i < ARRAY_SIZE(bad_subs); i++) {
		const struct bad_sub *s = &bad_subs[i];
		char hello_text[256], update_text[256];
		uint32_t reason, code;
		Ringtap__Frame__MsgCase hello, update;
		int fd = dial(path);

		send_sub(fd, s, false, false);
		hello = told(fd, &reason, hello_text, sizeof(hello_text));
		close(fd);
		fd = dial(path);
		send_sub(fd, s, true, false);
		send_sub(fd, s, false, true);
		update = told(fd, &code, update_text, sizeof(update_text));
		close(fd);
		if (hello != RINGTAP__FRAME__MSG_REFUSAL || reason != s->reason ||
		    strcmp(hello_text, s->text) || update != RINGTAP__FRAME__MSG_ERROR ||
		    code != code_of(s->reason) || strcmp(update_text, s->text)) {
			fprintf(stderr, "%s: Hello answered %d (reason %u '%s'), Update %d (Error "
				"%u '%s'); want reason %d and Error %u, both '%s'\n", s->what,
				hello, reason, hello_text, update, code, update_text, s->reason,
				code_of(s->reason), s->text);
			bad++;
		}
	}
	return bad;
}

/* Past max_clients, this many more are read so that they hear why (PROTOCOL.md). */
#define PENDING 16

/*
 * A flood of connections that each send half a Hello and wait: the first
 * max_clients + 16 are held until their Hello is due (Error ETIMEDOUT 10 to
 * 15 s after connecting, then the close), every one past them is turned away
 * as it is accepted (Refusal TOO_MANY_CLIENTS, then the close). The n_waiting
 * connections still waiting for their Hello take places of the held ones;
 * nothing else is open on the daemon, so the counts are exact.
 */
static unsigned int flood(const char *path, unsigned int max_clients, const int *waiting,
			  unsigned int n_waiting)
{
	enum { N = 100 };
	static const uint8_t half[] = { 40, 0x0a, 20, 0x08 };
	unsigned int held = max_clients + PENDING - n_waiting, refused = 0, timed_out = 0;
	unsigned int other = 0, early = 0, waited = 0;
	long start[N], took;
	bool at_once[N];
	int fds[N];

	if (held > N || n_waiting > max_clients + PENDING) {
		fprintf(stderr, "flood: %d connections do not pass %u\n", N, held);
		return 1;
	}
	for (int i = 0; i < N; i++) {
		fds[i] = dial(path);
		start[i] = now_ms();
		(void)!send(fds[i], half, sizeof(half), MSG_NOSIGNAL);
	}
	/* Turned away at once, or held (told only 10 s later): a second tells them apart. */
	usleep(1000 * 1000);
	for (int i = 0; i < N; i++) {
		struct pollfd p = { fds[i], POLLIN, 0 };

		at_once[i] = poll(&p, 1, 0) == 1;
	}
	for (int i = 0; i < N; i++) {
		Ringtap__RefusalReason reason = 0;
		uint32_t error = 0;
		bool closed;
		Ringtap__Frame__MsgCase got;

		got = answer(fds[i], 20000, &closed, &reason, &error);
		took = now_ms() - start[i];
		if (got == RINGTAP__FRAME__MSG_REFUSAL &&
		    reason == RINGTAP__REFUSAL_REASON__TOO_MANY_CLIENTS && closed && at_once[i]) {
			refused++;
		} else if (got == RINGTAP__FRAME__MSG_ERROR && error == ETIMEDOUT && closed) {
			timed_out++;
			/* Never before 10 s: the timer starts at accept, after the connect. */
			early += took < 10000 || at_once[i];
		} else if (other++ < 5) {
			fprintf(stderr, "flood #%d: answer %d (reason %d, error %u), closed %d after "
				"%ld ms\n", i, got, reason, error, closed, took);
		}
		close(fds[i]);
	}
	for (unsigned int i = 0; i < n_waiting; i++) {
		Ringtap__RefusalReason reason = 0;
		uint32_t error = 0;
		bool closed;

		waited += answer(waiting[i], 20000, &closed, &reason, &error) ==
				  RINGTAP__FRAME__MSG_ERROR && error == ETIMEDOUT && closed;
	}
	printf("random bytes inside a frame: %u of %u told ETIMEDOUT\n", waited, n_waiting);
	printf("flood of %d: %u turned away with TOO_MANY_CLIENTS (want %u), %u told ETIMEDOUT "
	       "(want %u, %u before 10 s), %u otherwise\n", N, refused, N - held, timed_out, held,
	       early, other);
	return refused != N - held || timed_out != held || early || other || waited != n_waiting;
}

/* An option of another encoding is refused, not ignored. */
static unsigned int projection_on_raw(const char *path)
{
	int fd = dial(path);
	Ringtap__RefusalReason reason = 0;
	bool closed;
	Ringtap__Frame__MsgCase got;

	send_hello_as(fd, 1, 1, "ringtap_test:*", RINGTAP__ENCODING__RAW, "seq");
	got = answer(fd, 5000, &closed, &reason, &(uint32_t){ 0 });
	close(fd);
	if (got == RINGTAP__FRAME__MSG_REFUSAL && reason == RINGTAP__REFUSAL_REASON__BAD_SUBSCRIPTION)
		return 0;
	fprintf(stderr, "fields with RAW: answer %d reason %d\n", got, reason);
	return 1;
}

/*
 * Bytes that call for an answer, then the peer's side shut: the answer is
 * still due (the peer reads on), an Error for a frame that breaks the
 * protocol as a Refusal for a Hello refused (ringtapd once read the end of
 * input first, closed as "disconnected" and dropped the answer it queued).
 */
static unsigned int error_after_shut(const char *path)
{
	static const uint8_t huge[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x20 };
	Ringtap__RefusalReason reason = 0;
	uint32_t error = 0;
	Ringtap__Frame__MsgCase got;
	unsigned int bad = 0;
	bool closed;
	int fd = dial(path);

	if (write(fd, huge, sizeof(huge)) < 0)
		return 1;
	shutdown(fd, SHUT_WR);
	got = answer(fd, 5000, &closed, &reason, &error);
	close(fd);
	if (got != RINGTAP__FRAME__MSG_ERROR || error != EMSGSIZE || !closed) {
		fprintf(stderr, "a length of 2^40, then shut: answer %d (error %u), closed %d\n",
			got, error, closed);
		bad++;
	}
	fd = dial(path);
	send_hello(fd, 5, 6, "ringtap_test:*");
	shutdown(fd, SHUT_WR);
	got = answer(fd, 5000, &closed, &reason, &error);
	close(fd);
	if (got != RINGTAP__FRAME__MSG_REFUSAL ||
	    reason != RINGTAP__REFUSAL_REASON__NO_COMMON_VERSION || !closed) {
		fprintf(stderr, "a Hello for versions 5-6, then shut: answer %d (reason %d), "
			"closed %d\n", got, reason, closed);
		bad++;
	}
	/* A subscriber that says Bye and ends its side reads on: our Bye comes last. */
	fd = dial(path);
	send_hello(fd, 1, 1, "ringtap_test:*");
	send_bye(fd);
	shutdown(fd, SHUT_WR);
	got = last_frame(fd, 5000);
	close(fd);
	if (got != RINGTAP__FRAME__MSG_BYE) {
		fprintf(stderr, "Hello, Bye, then shut: last frame %d, want our Bye\n", got);
		bad++;
	}
	return bad;
}

/*
 * What the protocol answers to bytes: the first frame's fate. NOT_SET: they
 * end inside a frame (no answer before the Hello is due). *error: the
 * Error's code.
 */
static Ringtap__Frame__MsgCase due(const uint8_t *b, size_t len, uint32_t *error)
{
	uint64_t flen = 0;
	size_t i = 0;
	Ringtap__Frame *f;
	Ringtap__Frame__MsgCase kind;

	for (;; i++) {
		if (i == len)
			return RINGTAP__FRAME__MSG__NOT_SET;
		/* The tenth byte of a varint holds bit 63 only. */
		if (i == 9 && b[i] > 1) {
			*error = EBADMSG;
			return RINGTAP__FRAME__MSG_ERROR;
		}
		flen |= (uint64_t)(b[i] & 0x7f) << (7 * i);
		if (!(b[i] & 0x80))
			break;
	}
	i++;
	if (flen > 64 * 1024) {
		*error = EMSGSIZE;
		return RINGTAP__FRAME__MSG_ERROR;
	}
	if (flen > len - i)
		return RINGTAP__FRAME__MSG__NOT_SET;
	f = ringtap__frame__unpack(NULL, flen, b + i);
	kind = f ? f->msg_case : RINGTAP__FRAME__MSG__NOT_SET;
	if (f)
		ringtap__frame__free_unpacked(f, NULL);
	if (kind == RINGTAP__FRAME__MSG_HELLO)
		return RINGTAP__FRAME__MSG_REFUSAL;
	*error = kind == RINGTAP__FRAME__MSG__NOT_SET ? EBADMSG : EPROTO;
	return RINGTAP__FRAME__MSG_ERROR;
}

int main(int argc, char **argv)
{
	unsigned int n, max_clients, ok = 0, bad = 0, unanswered = 0, n_waiting = 0;
	int *waiting;

	if (argc != 4) {
		fprintf(stderr, "usage: %s SOCKET N MAX_CLIENTS\n", argv[0]);
		return 2;
	}
	n = (unsigned int)atoi(argv[2]);
	max_clients = (unsigned int)atoi(argv[3]);
	waiting = calloc(n, sizeof(*waiting));
	if (!waiting)
		return 2;
	srand(42);
	for (unsigned int i = 0; i < n; i++) {
		int fd = dial(argv[1]);
		Ringtap__RefusalReason reason = 0, want_reason = 0;
		Ringtap__Frame__MsgCase got = 0, want = 0;
		uint32_t error = 0, want_error = 0;
		bool closed;
		uint8_t junk[200];
		size_t len;

		switch (i % 6) {
		case 0: /* random bytes: the daemon must answer as their first frame calls for */
			for (size_t k = 0; k < sizeof(junk); k++)
				junk[k] = (uint8_t)rand();
			len = 1 + (size_t)rand() % sizeof(junk);
			if (write(fd, junk, len) < 0)
				return 1;
			/*
			 * Not shut (see error_after_shut): bytes that end inside a
			 * frame wait for their Hello, told ETIMEDOUT in the flood.
			 */
			want = due(junk, len, &want_error);
			if (want == RINGTAP__FRAME__MSG__NOT_SET) {
				waiting[n_waiting++] = fd;
				ok++;
				continue;
			}
			break;
		case 1: { /* a length of 2^40: refused before anything is allocated */
			static const uint8_t huge[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x20 };

			if (write(fd, huge, sizeof(huge)) < 0)
				return 1;
			want = RINGTAP__FRAME__MSG_ERROR;
			want_error = EMSGSIZE;
			break;
		}
		case 2: /* a frame cut off mid-way, and the peer's side shut: no answer due */
			junk[0] = 100;
			if (write(fd, junk, 11) < 0)
				return 1;
			shutdown(fd, SHUT_WR);
			want = RINGTAP__FRAME__MSG__NOT_SET;
			break;
		case 3:
			send_hello(fd, 5, 6, "ringtap_test:*");
			want = RINGTAP__FRAME__MSG_REFUSAL;
			want_reason = RINGTAP__REFUSAL_REASON__NO_COMMON_VERSION;
			break;
		case 4:
			send_hello(fd, 1, 1, "nosuch:event");
			want = RINGTAP__FRAME__MSG_REFUSAL;
			want_reason = RINGTAP__REFUSAL_REASON__UNKNOWN_EVENT;
			break;
		case 5: /* a Hello, and gone before the answer: the daemon answers the next one */
			send_hello(fd, 1, 1, "ringtap_test:*");
			close(fd);
			fd = dial(argv[1]);
			send_hello(fd, 5, 6, "ringtap_test:*");
			want = RINGTAP__FRAME__MSG_REFUSAL;
			want_reason = RINGTAP__REFUSAL_REASON__NO_COMMON_VERSION;
			break;
		}
		got = answer(fd, 5000, &closed, &reason, &error);
		/* A random Hello is refused for whatever its fields are. */
		if (i % 6 == 0 && want == RINGTAP__FRAME__MSG_REFUSAL)
			want_reason = reason;
		if (closed && got == want && error == want_error && reason == want_reason) {
			ok++;
			unanswered += got == RINGTAP__FRAME__MSG__NOT_SET;
		} else {
			fprintf(stderr, "client %u (kind %u): answer %d (reason %d, error %u) closed %d; "
				"want %d (reason %d, error %u) and the close\n", i, i % 6, got, reason,
				error, closed, want, want_reason, want_error);
			bad++;
		}
		close(fd);
	}
	printf("garbage-clients: %u of %u answered as due (%u closed unanswered after their own "
	       "shut inside a frame, %u random ones waiting for their Hello)\n", ok, n,
	       unanswered, n_waiting);
	bad += projection_on_raw(argv[1]);
	bad += refused_updates(argv[1]);
	bad += hello_as_update(argv[1]);
	bad += flood(argv[1], max_clients, waiting, n_waiting);
	for (unsigned int i = 0; i < n_waiting; i++)
		close(waiting[i]);
	free(waiting);
	bad += error_after_shut(argv[1]);
	printf("garbage-clients: %u did not behave as expected\n", bad);
	return bad ? 1 : 0;
}
