// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rt-guest-soak SOCKET SECONDS [TRANSIENTS]: subscribers coming, changing
 * and going for SECONDS while the test source runs, for the soak test.
 *
 * One subscriber is kept throughout (DECODED, every CPU); up to TRANSIENTS
 * (default 12) others of all three encodings connect, Update their
 * subscription and leave at random, some of them reading too slowly to keep
 * up. Updates swap a subscription for an equivalent one (a CPU list for
 * "every CPU", a filter that holds for every record, a filter for a CPU
 * list): the daemon's state changes (kernel filters, CPU sets, encodings'
 * plans) while what the subscriber should receive does not, so its count
 * stays exact.
 *
 * Every record carries the test source's per-CPU sequence number (read from
 * the Schema's offsets for FIXED, from the format text with libtraceevent
 * for RAW). For each subscriber that left, on each CPU: between its first
 * and last record, every sequence number is either delivered or reported
 * lost before the next record came, exactly; no record comes twice or from
 * a CPU it did not select. Each prints
 *   sub I ENCODING SELECTION slow|fast cpuC first F last L delivered D lost-between M
 *       lost-outside O updates U
 * and "sub I FAIL: why" for every broken rule.
 *
 * After SECONDS every transient leaves (Bye, then what was queued) and
 * "transients done" is printed; on SIGUSR1 the kept one leaves too and its
 * totals are printed as "kept cpuC delivered D lost L" for the caller to
 * compare with the test source's emitted counts. Exit status 1 on any FAIL.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event-parse.h>
#include <kbuffer.h>

#include "ringtap.h"

#define MAX_CPUS 2
#define MAX_SUBS 64

enum selection { SEL_ALL, SEL_CPU0, SEL_CPU1, N_SEL };
static const char *const sel_names[] = { "all", "cpu0", "cpu1" };
#define N_VARIANTS 3

struct cpu_count {
	bool seen;
	uint64_t first, last, delivered;
	uint64_t lost_before, lost_between, pending_lost;
};

struct sub {
	struct ringtap_client *c;
	int id;
	Ringtap__Encoding enc;
	enum selection sel;
	bool kept, slow, was_slow, leaving, ended, clean;
	unsigned int updates;
	uint64_t next_read_ns;
	uint64_t stop_ns;		/* leaving: the latest it may take */
	int seq_field;			/* DECODED: index in the Schema */
	const Ringtap__Field *fixed_seq, *fixed_cpu;
	struct tep_handle *tep;		/* RAW */
	struct kbuffer *kb;
	struct tep_format_field *raw_seq, *raw_cpu;
	int raw_id;
	unsigned int bad;
	struct cpu_count cpu[MAX_CPUS];
};

static volatile sig_atomic_t kept_may_leave;
static unsigned int failures;

static void on_usr1(int sig)
{
	(void)sig;
	kept_may_leave = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static const char *enc_name(Ringtap__Encoding e)
{
	return e == RINGTAP__ENCODING__RAW ? "raw" : e == RINGTAP__ENCODING__FIXED ? "fixed" :
										     "decoded";
}

static void fail(struct sub *s, const char *why, unsigned int cpu, uint64_t a, uint64_t b)
{
	/* The first few of a kind say enough; the count says the rest. */
	if (s->bad++ < 5)
		printf("sub %d FAIL: %s (cpu%u: %" PRIu64 ", %" PRIu64 ")\n", s->id, why, cpu, a, b);
	failures++;
}

/*
 * The options of one of a selection's equivalent forms. RAW takes CPU
 * lists only: its pages carry every record, a filter cannot thin them.
 */
static void options_for(const struct sub *s, unsigned int variant, struct ringtap_client_opts *o)
{
	static const char *const events[] = { "ringtap_test:ringtap_test", NULL };
	static const uint32_t both[] = { 0, 1 }, only0[] = { 0 }, only1[] = { 1 };
	bool raw = s->enc == RINGTAP__ENCODING__RAW;

	o->events = events;
	o->client_name = s->kept ? "soak-kept" : "soak";
	o->encoding = s->enc;
	o->cpus = NULL;
	o->n_cpus = 0;
	o->filter = NULL;
	switch (s->sel) {
	case SEL_ALL:
		if (variant % N_VARIANTS == 1 || (raw && variant % 2)) {
			o->cpus = both;
			o->n_cpus = 2;
		} else if (variant % N_VARIANTS == 2 && !raw) {
			o->filter = "seq >= 0 || cpu > 1";
		}
		break;
	case SEL_CPU0:
	case SEL_CPU1:
		if (raw || variant % N_VARIANTS != 2) {
			o->cpus = s->sel == SEL_CPU0 ? only0 : only1;
			o->n_cpus = 1;
		}
		if (!raw && variant % N_VARIANTS)
			o->filter = s->sel == SEL_CPU0 ? "cpu == 0" : "cpu == 1 && seq >= 0";
		break;
	default:
		break;
	}
}

static void count_record(struct sub *s, unsigned int cpu, uint64_t seq)
{
	struct cpu_count *k;

	if (cpu >= MAX_CPUS || (s->sel == SEL_CPU0 && cpu != 0) || (s->sel == SEL_CPU1 && cpu != 1)) {
		fail(s, "a record from a CPU it did not select", cpu, seq, 0);
		return;
	}
	k = &s->cpu[cpu];
	if (!k->seen) {
		k->seen = true;
		k->first = seq;
		k->lost_before = k->pending_lost;
	} else if (seq <= k->last) {
		fail(s, "a sequence number twice or backwards", cpu, seq, k->last);
		return;
	} else if (seq - k->last - 1 != k->pending_lost) {
		/* Missing records must have been reported lost before the next one came. */
		fail(s, "a gap not reported as lost (missing, reported)", cpu, seq - k->last - 1,
		     k->pending_lost);
		if (s->bad <= 5)
			printf("sub %d gap: cpu%u seq %" PRIu64 " after %" PRIu64 " (%s, selection %d)\n",
			       s->id, cpu, seq, k->last, enc_name(s->enc), (int)s->sel);
		k->lost_between += k->pending_lost;
	} else {
		k->lost_between += k->pending_lost;
	}
	k->pending_lost = 0;
	k->last = seq;
	k->delivered++;
}

static uint64_t read_uint(const uint8_t *p, size_t size)
{
	uint64_t v = 0;

	/* The guest is little-endian, as the Welcome's Layout says and main() checks. */
	memcpy(&v, p, size < sizeof(v) ? size : sizeof(v));
	return v;
}

static int prepare_raw(struct sub *s)
{
	const Ringtap__Layout *l = ringtap_welcome(s->c)->layout;
	const Ringtap__Schema *sc = ringtap_find_schema(s->c, "ringtap_test", "ringtap_test");
	struct tep_event *ev;

	if (!sc || !sc->format)
		return -ENOENT;
	s->tep = tep_alloc();
	if (!s->tep)
		return -ENOMEM;
	tep_set_long_size(s->tep, (int)l->long_size);
	tep_set_page_size(s->tep, (int)l->sub_buffer_size);
	if (tep_parse_header_page(s->tep, l->header_page, strlen(l->header_page),
				  (int)l->long_size) ||
	    tep_parse_event(s->tep, sc->format, strlen(sc->format), sc->system))
		return -EINVAL;
	ev = tep_find_event_by_name(s->tep, "ringtap_test", "ringtap_test");
	s->kb = tep_kbuffer(s->tep);
	if (!ev || !s->kb)
		return -EINVAL;
	s->raw_id = ev->id;
	s->raw_seq = tep_find_field(ev, "seq");
	s->raw_cpu = tep_find_field(ev, "cpu");
	return s->raw_seq && s->raw_cpu ? 0 : -EINVAL;
}

static void take_page(struct sub *s, unsigned int page_cpu, const ProtobufCBinaryData *page)
{
	unsigned long long ts;
	uint8_t *copy;
	void *rec;

	if (!s->kb && prepare_raw(s)) {
		fail(s, "a page before a usable format text", page_cpu, 0, 0);
		return;
	}
	/* kbuffer reads in place and may read a little past a short page. */
	copy = calloc(1, page->len + 64);
	if (!copy)
		return;
	memcpy(copy, page->data, page->len);
	kbuffer_load_subbuffer(s->kb, copy);
	for (rec = kbuffer_read_event(s->kb, &ts); rec; rec = kbuffer_next_event(s->kb, &ts)) {
		struct tep_record r = { .data = rec, .size = kbuffer_event_size(s->kb) };

		if (tep_data_type(s->tep, &r) != s->raw_id)
			continue;
		if ((unsigned int)read_uint((uint8_t *)rec + s->raw_cpu->offset,
					    (size_t)s->raw_cpu->size) != page_cpu)
			fail(s, "a record in a page of another CPU", page_cpu, 0, 0);
		count_record(s, page_cpu, read_uint((uint8_t *)rec + s->raw_seq->offset,
						    (size_t)s->raw_seq->size));
	}
	free(copy);
}

static void take_fixed(struct sub *s, unsigned int cpu, const ProtobufCBinaryData *data)
{
	if (!s->fixed_seq) {
		const Ringtap__Schema *sc = ringtap_find_schema(s->c, "ringtap_test",
								"ringtap_test");

		for (size_t i = 0; sc && i < sc->n_fields; i++) {
			if (!strcmp(sc->fields[i]->name, "seq"))
				s->fixed_seq = sc->fields[i];
			if (!strcmp(sc->fields[i]->name, "cpu"))
				s->fixed_cpu = sc->fields[i];
		}
		if (!s->fixed_seq || !s->fixed_cpu) {
			fail(s, "a FIXED record before a Schema with seq and cpu", cpu, 0, 0);
			return;
		}
	}
	if (s->fixed_seq->offset + s->fixed_seq->size > data->len) {
		fail(s, "a FIXED record too short for its Schema", cpu, data->len, 0);
		return;
	}
	count_record(s, cpu, read_uint(data->data + s->fixed_seq->offset, s->fixed_seq->size));
}

static void take_record(struct sub *s, const struct ringtap_event *ev)
{
	const struct ringtap_record_view *v = ringtap_record_view(s->c, ev);

	if (s->seq_field < 0)
		for (size_t i = 0; i < ev->schema->n_fields; i++)
			if (!strcmp(ev->schema->fields[i]->name, "seq"))
				s->seq_field = (int)i;
	if (!v || s->seq_field < 0 || (size_t)s->seq_field >= v->n_fields ||
	    v->fields[s->seq_field].kind != RINGTAP_VALUE_UNSIGNED) {
		fail(s, "a record without its seq", ev->cpu, 0, 0);
		return;
	}
	count_record(s, ev->cpu, v->fields[s->seq_field].u);
}

static void take(struct sub *s, const struct ringtap_event *ev)
{
	switch (ev->kind) {
	case RINGTAP_RECORD:
		take_record(s, ev);
		break;
	case RINGTAP_FIXED:
		take_fixed(s, ev->cpu, &ev->fixed->data);
		break;
	case RINGTAP_PAGE:
		take_page(s, ev->cpu, ev->page);
		break;
	case RINGTAP_LOST:
		if (ev->lost->has_count_exact && !ev->lost->count_exact)
			fail(s, "a loss report without an exact count", ev->cpu, ev->lost->count, 0);
		if (ev->cpu < MAX_CPUS)
			s->cpu[ev->cpu].pending_lost += ev->lost->count;
		break;
	default:
		break;
	}
}

static int subscribe(struct sub *s, const char *path)
{
	struct ringtap_client_opts o = { .socket_path = path, .timeout_ms = 20000 };
	struct ringtap_connect_error err;
	int ret;

	options_for(s, 0, &o);
	ret = ringtap_connect(&s->c, &o, &err);
	if (ret) {
		printf("sub %d FAIL: connect: %s\n", s->id, err.text);
		failures++;
		return ret;
	}
	if (ringtap_welcome(s->c)->layout->big_endian) {
		printf("sub %d FAIL: a big-endian guest; this reader is little-endian only\n", s->id);
		failures++;
		return -EPROTO;
	}
	ringtap_set_record_views(s->c, true);
	s->seq_field = -1;
	return 0;
}

static void update(struct sub *s, const char *path)
{
	struct ringtap_client_opts o = { .socket_path = path };

	options_for(s, ++s->updates, &o);
	if (ringtap_update(s->c, &o)) {
		printf("sub %d FAIL: update: %s\n", s->id, ringtap_error_text(s->c));
		failures++;
	}
}

static void leave(struct sub *s)
{
	if (ringtap_bye(s->c)) {
		printf("sub %d FAIL: bye: %s\n", s->id, ringtap_error_text(s->c));
		failures++;
	}
	s->leaving = true;
	s->slow = false;
	s->stop_ns = now_ns() + 60ull * 1000000000;
}

/* What it received, printed and checked; then the connection is gone. */
static void report(struct sub *s)
{
	if (!s->clean) {
		printf("sub %d FAIL: its stream ended without the daemon's Bye\n", s->id);
		failures++;
	}
	for (unsigned int cpu = 0; cpu < MAX_CPUS; cpu++) {
		struct cpu_count *k = &s->cpu[cpu];

		if (!k->seen && !k->pending_lost)
			continue;
		printf("sub %d %s %s %s cpu%u first %" PRIu64 " last %" PRIu64 " delivered %" PRIu64
		       " lost-between %" PRIu64 " lost-outside %" PRIu64 " updates %u\n", s->id,
		       enc_name(s->enc), sel_names[s->sel], s->was_slow ? "slow" : "fast", cpu, k->first,
		       k->last, k->delivered, k->lost_between, k->lost_before + k->pending_lost,
		       s->updates);
		if (k->seen && k->last - k->first + 1 != k->delivered + k->lost_between)
			fail(s, "delivered + lost differs from its span", cpu,
			     k->delivered + k->lost_between, k->last - k->first + 1);
	}
	if (s->kept)
		for (unsigned int cpu = 0; cpu < MAX_CPUS; cpu++)
			printf("kept cpu%u delivered %" PRIu64 " lost %" PRIu64 "\n", cpu,
			       s->cpu[cpu].delivered,
			       s->cpu[cpu].lost_before + s->cpu[cpu].lost_between +
				       s->cpu[cpu].pending_lost);
	ringtap_close(s->c);
	kbuffer_free(s->kb);
	tep_free(s->tep);
	memset(s, 0, sizeof(*s));
}

/* Takes what each connection has, a slow one only one record a turn. */
static unsigned int drain(struct sub *subs, unsigned int n, int timeout_ms)
{
	struct pollfd pfd[MAX_SUBS];
	uint64_t t = now_ns();
	unsigned int open = 0;

	for (unsigned int i = 0; i < n; i++) {
		pfd[i].fd = subs[i].c && !subs[i].ended ? ringtap_fd(subs[i].c) : -1;
		pfd[i].events = POLLIN;
		if (subs[i].slow && t < subs[i].next_read_ns)
			pfd[i].fd = -1;
	}
	if (poll(pfd, n, timeout_ms) < 0 && errno != EINTR)
		return 0;
	for (unsigned int i = 0; i < n; i++) {
		struct sub *s = &subs[i];
		struct ringtap_event ev;
		int got;

		if (!s->c || s->ended || (s->slow && now_ns() < s->next_read_ns))
			continue;
		while ((got = ringtap_next(s->c, &ev, 0)) != 0) {
			if (got == -EINTR)
				continue;
			if (got < 0 || ev.kind == RINGTAP_END || ev.kind == RINGTAP_ERROR_FRAME) {
				if (got < 0 || ev.kind == RINGTAP_ERROR_FRAME) {
					printf("sub %d FAIL: %s\n", s->id,
					       got < 0 ? ringtap_error_text(s->c) : ev.error->text);
					failures++;
				}
				s->ended = true;
				s->clean = got > 0 && ev.kind == RINGTAP_END && ev.end_clean;
				break;
			}
			take(s, &ev);
			if (s->slow && ev.kind != RINGTAP_LOST && ev.kind != RINGTAP_HEARTBEAT) {
				/* 20 records a second: far less than the test source's rate. */
				s->next_read_ns = now_ns() + 50000000;
				break;
			}
		}
		if (s->leaving && !s->ended && now_ns() > s->stop_ns) {
			printf("sub %d FAIL: no end of stream within 60 s of its Bye\n", s->id);
			failures++;
			s->ended = true;
		}
		if (s->ended)
			report(s);
		open += s->c != NULL;
	}
	return open;
}

int main(int argc, char **argv)
{
	static struct sub subs[MAX_SUBS];
	unsigned int transients = argc > 3 ? (unsigned int)atoi(argv[3]) : 12;
	unsigned int next_id = 1, connections = 1, updates = 0, leaves = 0;
	uint64_t end, next_action;
	unsigned int seed = 1;
	const char *path;

	if (argc < 3 || argc > 4 || atoi(argv[2]) <= 0 || transients + 1 > MAX_SUBS) {
		fprintf(stderr, "usage: rt-guest-soak SOCKET SECONDS [TRANSIENTS < %d]\n", MAX_SUBS);
		return 2;
	}
	path = argv[1];
	signal(SIGUSR1, on_usr1);
	subs[0].kept = true;
	subs[0].enc = RINGTAP__ENCODING__DECODED;
	subs[0].sel = SEL_ALL;
	if (subscribe(&subs[0], path))
		return 1;
	printf("kept subscribed\n");
	fflush(stdout);
	end = now_ns() + (uint64_t)atoi(argv[2]) * 1000000000;
	next_action = now_ns();
	while (now_ns() < end) {
		drain(subs, transients + 1, 5);
		if (now_ns() < next_action)
			continue;
		/* About five changes a second, each at one subscriber. */
		next_action = now_ns() + 100000000 + (uint64_t)(rand_r(&seed) % 200) * 1000000;
		unsigned int i = 1 + (unsigned int)rand_r(&seed) % transients;
		struct sub *s = &subs[i];
		int dice = rand_r(&seed) % 10;

		if (dice == 0) {
			update(&subs[0], path);
			updates++;
		} else if (!s->c) {
			s->id = (int)++next_id;
			s->enc = (Ringtap__Encoding)(1 + rand_r(&seed) % 3);
			s->sel = (enum selection)(rand_r(&seed) % N_SEL);
			s->slow = s->was_slow = rand_r(&seed) % 4 == 0;
			if (!subscribe(s, path))
				connections++;
			else
				memset(s, 0, sizeof(*s));
		} else if (!s->leaving && dice < 6) {
			update(s, path);
			updates++;
		} else if (!s->leaving) {
			leave(s);
			leaves++;
		}
		fflush(stdout);
	}
	for (unsigned int i = 1; i <= transients; i++)
		if (subs[i].c && !subs[i].leaving) {
			leave(&subs[i]);
			leaves++;
		}
	while (drain(subs, transients + 1, 5) > 1)
		;
	printf("transients done: %u connections, %u updates, %u left\n", connections, updates,
	       leaves);
	fflush(stdout);
	while (!kept_may_leave)
		drain(subs, 1, 5);
	if (subs[0].c)
		leave(&subs[0]);
	while (drain(subs, 1, 5))
		;
	printf("soak: %u failures\n", failures);
	return failures ? 1 : 0;
}
