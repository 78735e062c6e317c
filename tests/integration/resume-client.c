// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * resume-client: a resumable stream cut short and resumed (libringtap's
 * ringtap_connect_resumable), then resume tokens tampered with.
 *
 * 1. Connects resumable to a daemon that read nothing yet
 *    (--wait-subscribers=1), takes FIRST records (RAW: whole pages until
 *    at least FIRST records) and closes, its place saved.
 * 2. Resumes from the place and reads until TOTAL records came in all.
 *    Every (cpu, seq) must come once, and each CPU's seqs be 1..n without
 *    a hole: the catch-up from the ring gave exactly what the first
 *    connection had not had (RAW: by each page's first_seq and count).
 * 3. A Hello with the second connection's token changed in its MAC, in
 *    its secret's id, in the peer it names, cut short, and one resuming
 *    ahead of the daemon: each is refused with RESUME_REFUSED and says why.
 *
 * Over TLS (the five extra arguments), step 3 is instead: the place and
 * token presented by another certificate the daemon also serves, which is
 * refused as another peer's.
 *
 * "ring": DECODED read from the page ring; the place saved is the ring
 * reader itself, and the second connection reads on from its cursors.
 *
 * usage: resume-client ADDRESS decoded|raw|ring TOTAL FIRST [CA CERT KEY OTHER_CERT OTHER_KEY]
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dial.h"
#include "ringtap.h"
#include "wire.h"

#define MAX_CPUS 64
#define MAX_SEQ 100000

static int failures;
static unsigned char *seen[MAX_CPUS];	/* per CPU: how often each seq came */

#define FAIL(...) do { printf("FAIL: " __VA_ARGS__); putchar('\n'); failures++; } while (0)

static void note(unsigned int cpu, uint64_t first, uint64_t n)
{
	if (cpu >= MAX_CPUS || !first || first + n > MAX_SEQ) {
		FAIL("cpu %u seq %llu (+%llu): out of range or not numbered", cpu,
		     (unsigned long long)first, (unsigned long long)n);
		return;
	}
	if (!seen[cpu])
		seen[cpu] = calloc(MAX_SEQ, 1);
	for (uint64_t s = first; s < first + n; s++)
		seen[cpu][s]++;
}

/* RAW: each page's records by Pages.first_seq, as the frames come. */
static void on_frame(void *ctx, const Ringtap__Frame *f)
{
	(void)ctx;
	if (f->msg_case == RINGTAP__FRAME__MSG_PAGES && f->pages->n_records == 1 &&
	    f->pages->records[0])
		note(f->pages->cpu, f->pages->has_first_seq ? f->pages->first_seq : 0,
		     f->pages->records[0]);
}

/*
 * Events until `until` records came (whole pages for RAW), or with drain
 * until none came for 1.5 s; the records taken. A loss is a failure.
 */
static uint64_t take(struct ringtap_client *c, bool raw, uint64_t until, bool drain)
{
	uint64_t got = 0;
	struct ringtap_event ev;

	while (drain || got < until) {
		int n = ringtap_next(c, &ev, drain ? 1500 : 10000);

		if (n == 0 && drain)
			break;
		if (n <= 0 || ev.kind == RINGTAP_END || ev.kind == RINGTAP_ERROR_FRAME) {
			FAIL("the stream ended after %llu records: %s", (unsigned long long)got,
			     n < 0 ? ringtap_error_text(c) : n == 0 ? "timeout" : "its end");
			break;
		}
		if (ev.kind == RINGTAP_LOST)
			FAIL("lost %llu on cpu %u", (unsigned long long)ev.lost->count, ev.cpu);
		if (raw && ev.kind == RINGTAP_PAGE)
			got += ev.page_records;
		if (!raw && ev.kind == RINGTAP_RECORD) {
			const struct ringtap_record_view *v = ringtap_record_view(c, &ev);

			note(ev.cpu, v ? v->seq : 0, 1);
			got++;
		}
	}
	return got;
}

/* The answer to a Hello resuming with token (len bytes) from seq on cpu 0: its refusal text. */
static int refusal_for(const char *path, const uint8_t *token, size_t len, uint64_t seq,
		       char *text, size_t size)
{
	Ringtap__Frame f = RINGTAP__FRAME__INIT, *answer;
	Ringtap__Hello h = RINGTAP__HELLO__INIT;
	Ringtap__Subscription sub = RINGTAP__SUBSCRIPTION__INIT;
	Ringtap__Resume r = RINGTAP__RESUME__INIT;
	Ringtap__Encoding enc = RINGTAP__ENCODING__DECODED;
	char *events[1] = { "*:*" };
	uint32_t cpu = 0;
	uint8_t *buf, in[65536];
	size_t blen, have = 0;
	int fd = dial(path), reason = -1;
	uint64_t flen;
	int used;

	h.min_version = h.max_version = 1;
	h.n_encodings = 1;
	h.encodings = &enc;
	h.client_name = "resume-client forged";
	sub.n_events = 1;
	sub.events = events;
	h.subscription = &sub;
	r.token.data = (uint8_t *)token;
	r.token.len = len;
	r.n_cpus = r.n_seqs = 1;
	r.cpus = &cpu;
	r.seqs = &seq;
	h.resume = &r;
	f.msg_case = RINGTAP__FRAME__MSG_HELLO;
	f.hello = &h;
	if (rt_wire_encode(&f, &buf, &blen) || write(fd, buf, blen) != (ssize_t)blen) {
		close(fd);
		return -1;
	}
	free(buf);
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&p, 1, 5000) <= 0 || (n = read(fd, in + have, sizeof(in) - have)) <= 0)
			break;
		have += (size_t)n;
		used = rt_wire_varint_decode(in, have, &flen);
		if (used > 0 && have >= used + flen) {
			answer = ringtap__frame__unpack(NULL, flen, in + used);
			if (answer && answer->msg_case == RINGTAP__FRAME__MSG_REFUSAL) {
				reason = answer->refusal->reason;
				snprintf(text, size, "%s", answer->refusal->text ?: "");
			} else {
				snprintf(text, size, "not a Refusal");
			}
			if (answer)
				ringtap__frame__free_unpacked(answer, NULL);
			break;
		}
	}
	close(fd);
	return reason;
}

static void expect_refused(const char *path, const char *what, const uint8_t *token, size_t len,
			   uint64_t seq, const char *want)
{
	char text[512] = "";
	int reason = refusal_for(path, token, len, seq, text, sizeof(text));

	if (reason != RINGTAP__REFUSAL_REASON__RESUME_REFUSED || !strstr(text, want))
		FAIL("%s: reason %d '%s', want RESUME_REFUSED saying '%s'", what, reason, text,
		     want);
	else
		printf("ok: %s refused: %s\n", what, text);
}

static void tampered(const char *path, const Ringtap__Welcome *w)
{
	uint8_t t[256];
	size_t len = w->resume_token.len;

	if (len < 20 || len > sizeof(t)) {
		FAIL("a token of %zu bytes", len);
		return;
	}
	memcpy(t, w->resume_token.data, len);
	t[len - 1] ^= 1;
	expect_refused(path, "a token with its MAC changed", t, len, 0, "forged");
	memcpy(t, w->resume_token.data, len);
	t[4] ^= 1;
	expect_refused(path, "a token of another secret", t, len, 0, "stale");
	memcpy(t, w->resume_token.data, len);
	t[12] ^= 1;
	expect_refused(path, "a token naming another peer", t, len, 0, "another peer");
	expect_refused(path, "a token cut short", w->resume_token.data, len - 1, 0, "malformed");
	expect_refused(path, "a place ahead of the daemon", w->resume_token.data, len, 1u << 30,
		       "ahead");
}

int main(int argc, char **argv)
{
	const char *events[] = { "*:*", NULL };
	struct ringtap_client_opts o = { .events = events, .client_name = "resume-client" };
	struct ringtap_connect_error err;
	struct ringtap_resume *place = ringtap_resume_new();
	struct ringtap_client *c;
	uint64_t total, first, got, cpus_with = 0, in_all = 0;
	bool raw;

	if ((argc != 5 && argc != 10) || !place) {
		fprintf(stderr, "usage: resume-client ADDRESS decoded|raw|ring TOTAL FIRST "
			"[CA CERT KEY OTHER_CERT OTHER_KEY]\n");
		return 2;
	}
	if (argc == 10) {
		o.tls_ca = argv[5];
		o.tls_cert = argv[6];
		o.tls_key = argv[7];
	}
	o.socket_path = argv[1];
	raw = !strcmp(argv[2], "raw");
	o.encoding = raw ? RINGTAP__ENCODING__RAW : RINGTAP__ENCODING__DECODED;
	if (!strcmp(argv[2], "ring"))
		o.transport = RINGTAP_TRANSPORT_RING;
	total = strtoull(argv[3], NULL, 10);
	first = strtoull(argv[4], NULL, 10);
	if (ringtap_connect_resumable(&c, &o, NULL, &err)) {
		fprintf(stderr, "resume-client: %s\n", err.text);
		return 2;
	}
	if (raw)
		ringtap_set_frame_tap(c, on_frame);
	else
		ringtap_set_record_views(c, true);
	got = take(c, raw, first, false);
	if (ringtap_resume_save(c, place))
		FAIL("no place to save");
	ringtap_close(c);
	printf("ok: first connection took %llu records\n", (unsigned long long)got);
	if (ringtap_connect_resumable(&c, &o, place, &err)) {
		FAIL("resuming: %s", err.text);
		return 1;
	}
	if (raw)
		ringtap_set_frame_tap(c, on_frame);
	else
		ringtap_set_record_views(c, true);
	got += take(c, raw, 0, true);
	if (got != total)
		FAIL("%llu records in all, want %llu", (unsigned long long)got,
		     (unsigned long long)total);
	else
		printf("ok: %llu records in all across the two connections\n",
		       (unsigned long long)got);
	for (unsigned int cpu = 0; cpu < MAX_CPUS; cpu++) {
		uint64_t max = 0, holes = 0, twice = 0;

		for (uint64_t s = 1; seen[cpu] && s < MAX_SEQ; s++)
			if (seen[cpu][s])
				max = s;
		for (uint64_t s = 1; s <= max; s++) {
			holes += !seen[cpu][s];
			twice += seen[cpu][s] > 1;
		}
		if (holes || twice)
			FAIL("cpu %u: seqs 1..%llu with %llu holes and %llu twice", cpu,
			     (unsigned long long)max, (unsigned long long)holes,
			     (unsigned long long)twice);
		cpus_with += max > 0;
		in_all += max;
	}
	printf("ok: %llu CPUs, seqs 1..n on each without a hole or a repeat (%llu)\n",
		       (unsigned long long)cpus_with, (unsigned long long)in_all);
	if (argc == 5) {
		tampered(argv[1], ringtap_welcome(c));
	} else {
		struct ringtap_client *other;

		/* The place and token, shown by another certificate: refused as another peer's. */
		if (ringtap_resume_save(c, place))
			FAIL("no place to save");
		o.tls_cert = argv[8];
		o.tls_key = argv[9];
		if (!ringtap_connect_resumable(&other, &o, place, &err)) {
			FAIL("another certificate resumed this one's stream");
			ringtap_close(other);
		} else if (err.refusal != RINGTAP__REFUSAL_REASON__RESUME_REFUSED ||
			   !strstr(err.text, "given to another peer")) {
			FAIL("another certificate's resume: %s", err.text);
		} else {
			printf("ok: another certificate's resume refused: %s\n", err.text);
		}
	}
	ringtap_close(c);
	ringtap_resume_free(place);
	return failures ? 1 : 0;
}
