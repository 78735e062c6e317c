// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * garbage-clients: connects N times to ringtapd and misbehaves in six ways,
 * checking each answer: random bytes, an oversized length, a frame cut off
 * mid-way, an unknown version, an unknown event, a Hello and gone. Then a RAW
 * subscription asks for a projection (refused), two Updates are refused (each
 * must say why), 100 connections at once must leave those past the limit
 * told TOO_MANY_CLIENTS, and a client sends half a Hello and waits: it must
 * be told ETIMEDOUT and closed.
 *
 * usage: garbage-clients SOCKET N
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "dial.h"
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

/*
 * A refused Update ends the stream with an Error that says why, as a refused
 * Hello's Refusal would: the first Error's code and text, "" if none came.
 */
static uint32_t update_refused(const char *path, const char *event, bool host_texts,
			       char *text, size_t size)
{
	int fd = dial(path);
	struct rt_wire_reader r;
	struct pollfd p = { fd, POLLIN, 0 };
	uint32_t code = 0;

	snprintf(text, size, "%s", "");
	send_hello(fd, 1, 1, "ringtap_test:*");
	send_update(fd, event, host_texts);
	rt_wire_reader_init(&r, 0);
	while (!code && poll(&p, 1, 5000) == 1) {
		uint8_t buf[4096];
		ssize_t n = read(fd, buf, sizeof(buf));
		size_t used;
		Ringtap__Frame *f;

		if (n <= 0)
			break;
		/* The reader takes up to the end of a frame a call: feed it all. */
		for (size_t off = 0; off < (size_t)n && !code; off += used) {
			if (rt_wire_reader_feed(&r, buf + off, (size_t)n - off, &used) < 0)
				break;
			while (!code && rt_wire_reader_next(&r, &f) == 1) {
				if (f->msg_case == RINGTAP__FRAME__MSG_ERROR) {
					code = f->error->code;
					snprintf(text, size, "%s", f->error->text);
				}
				ringtap__frame__free_unpacked(f, NULL);
			}
		}
	}
	rt_wire_reader_release(&r);
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
 * A flood of connections that say nothing: past max_clients plus the ones
 * waiting for their answer, each is turned away unread, but told why.
 */
static unsigned int flood(const char *path)
{
	enum { N = 100 };
	int fds[N];
	unsigned int told = 0, other = 0;

	for (int i = 0; i < N; i++)
		fds[i] = dial(path);
	usleep(1000 * 1000);
	for (int i = 0; i < N; i++) {
		struct pollfd p = { fds[i], POLLIN, 0 };
		struct rt_wire_reader r;
		uint8_t buf[512];
		ssize_t n;
		size_t used;
		Ringtap__Frame *f;

		/*
		 * Turned away at once, or held open waiting for a Hello (told
		 * ETIMEDOUT only 10 s later): a second is enough to tell them apart.
		 */
		if (poll(&p, 1, 0) != 1 || (n = read(fds[i], buf, sizeof(buf))) <= 0)
			continue;
		rt_wire_reader_init(&r, 0);
		if (rt_wire_reader_feed(&r, buf, (size_t)n, &used) >= 0 &&
		    rt_wire_reader_next(&r, &f) == 1) {
			if (f->msg_case == RINGTAP__FRAME__MSG_REFUSAL &&
			    f->refusal->reason == RINGTAP__REFUSAL_REASON__TOO_MANY_CLIENTS)
				told++;
			else
				other++;
			ringtap__frame__free_unpacked(f, NULL);
		}
		rt_wire_reader_release(&r);
	}
	for (int i = 0; i < N; i++)
		close(fds[i]);
	/* 64 subscribers and 16 waiting are kept (fewer if others are still open). */
	if (told >= N - 80 && !other)
		return 0;
	fprintf(stderr, "flood of %d: %u told TOO_MANY_CLIENTS, %u other answers\n", N, told, other);
	return 1;
}

/* A whole Hello is due 10 to 15 s after connecting, for local peers too. */
static unsigned int half_a_hello(const char *path)
{
	int fd = dial(path);
	static const uint8_t half[] = { 40, 0x0a, 20, 0x08 };
	Ringtap__RefusalReason reason = 0;
	uint32_t error = 0;
	bool closed;
	Ringtap__Frame__MsgCase got;

	if (write(fd, half, sizeof(half)) < 0)
		return 1;
	got = answer(fd, 20000, &closed, &reason, &error);
	close(fd);
	if (got == RINGTAP__FRAME__MSG_ERROR && error == ETIMEDOUT && closed)
		return 0;
	fprintf(stderr, "half a Hello: answer %d error %d closed %d\n", got, error, closed);
	return 1;
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

int main(int argc, char **argv)
{
	unsigned int n, ok = 0, bad = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: %s SOCKET N\n", argv[0]);
		return 2;
	}
	n = (unsigned int)atoi(argv[2]);
	srand(42);
	for (unsigned int i = 0; i < n; i++) {
		int fd = dial(argv[1]);
		Ringtap__RefusalReason reason = 0;
		Ringtap__Frame__MsgCase got = 0, want = 0;
		bool closed, expect_answer = true;
		uint8_t junk[200];

		switch (i % 6) {
		case 0: /* random bytes: whatever they say, the daemon must end it cleanly */
			for (size_t k = 0; k < sizeof(junk); k++)
				junk[k] = (uint8_t)rand();
			if (write(fd, junk, 1 + rand() % sizeof(junk)) < 0)
				return 1;
			shutdown(fd, SHUT_WR);
			expect_answer = false;
			break;
		case 1: { /* a length of 2^40: refused before anything is allocated */
			static const uint8_t huge[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x20 };

			if (write(fd, huge, sizeof(huge)) < 0)
				return 1;
			want = RINGTAP__FRAME__MSG_ERROR;
			break;
		}
		case 2: /* a frame cut off mid-way */
			junk[0] = 100;
			if (write(fd, junk, 11) < 0)
				return 1;
			shutdown(fd, SHUT_WR);
			expect_answer = false;
			break;
		case 3:
			send_hello(fd, 5, 6, "ringtap_test:*");
			want = RINGTAP__FRAME__MSG_REFUSAL;
			break;
		case 4:
			send_hello(fd, 1, 1, "nosuch:event");
			want = RINGTAP__FRAME__MSG_REFUSAL;
			break;
		case 5: /* a Hello, and gone before the answer: the daemon answers the next one */
			send_hello(fd, 1, 1, "ringtap_test:*");
			close(fd);
			fd = dial(argv[1]);
			send_hello(fd, 5, 6, "ringtap_test:*");
			want = RINGTAP__FRAME__MSG_REFUSAL;
			break;
		}
		got = answer(fd, 5000, &closed, &reason, &(uint32_t){ 0 });
		if (closed && (!expect_answer || got == want))
			ok++;
		else {
			fprintf(stderr, "client %u (kind %u): answer %d closed %d\n", i, i % 6, got,
				closed);
			bad++;
		}
		if ((i % 6 == 3 || i % 6 == 5) && reason != RINGTAP__REFUSAL_REASON__NO_COMMON_VERSION)
			bad++;
		if (i % 6 == 4 && reason != RINGTAP__REFUSAL_REASON__UNKNOWN_EVENT)
			bad++;
		close(fd);
	}
	bad += projection_on_raw(argv[1]);
	bad += refused_updates(argv[1]);
	bad += flood(argv[1]);
	bad += half_a_hello(argv[1]);
	printf("garbage-clients: %u behaved as expected, %u did not\n", ok, bad);
	return bad ? 1 : 0;
}
