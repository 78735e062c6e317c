// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rt-guest-load SOCKET N [KIND,...]: N subscribers in one process, for the
 * load tests. Connection i takes ringtap_test:ringtap_test as kind i % 5, or
 * as the i-th of the kinds given (round robin):
 *   0 "all"     DECODED, every CPU, read as fast as it comes
 *   1 "cpu0"    DECODED, CPU 0 only
 *   2 "fixed"   FIXED (padded-2012), every CPU
 *   3 "filter"  DECODED with the filter "cpu == 1"
 *   4 "slow"    DECODED, every CPU, one event per 20 ms at most until SIGUSR1,
 *               then as fast as the others (to take the rest before the stop)
 *   5 "raw"     RAW pages, every CPU, walked here (kbuffer, with the Welcome's
 *               header_page): delivered are the test records found in them
 *   6 "ring"    DECODED over ringtapd's page ring (RINGTAP_TRANSPORT_RING: the
 *               pages read from the mapping and decoded by the library), every
 *               CPU, read as fast as it comes
 *   7 "ringslow" the same, read like "slow": the writer laps it
 *   8 "ringidle" the same, mapped and then neither polled nor read until
 *               SIGUSR1: it costs ringtapd nothing, and loses what was overwritten
 * It reads until every connection has ended (the daemon stopping ends them)
 * and prints, per connection and CPU, records delivered and records the
 * daemon reported lost, plus the sequence numbers' check for every kind
 * (DECODED: the seq field; FIXED: seq where the padded-2012 layout puts it;
 * RAW: seq where the event's format text says):
 *   conn I KIND cpuC delivered D lost L exact E dup U
 *   seqs I cpuC first F last L unexplained U after A before B lostfirst X lostlast Y
 * (lostfirst: reported lost before the first record, lostlast: after the
 * last), and whether its stream ended with the daemon's Bye ("end I clean")
 * or not. (exact 0 when a loss report had no count). Exit status 1 when a
 * connection failed or a sequence number came twice or went backwards.
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

#include "padded-2012.h"
#include "ringtap.h"

#define MAX_CPUS 8

static const char *const kinds[] = { "all", "cpu0", "fixed", "filter", "slow", "raw", "ring",
				     "ringslow", "ringidle" };
#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))
#define SLOW 4
#define RAW 5
#define RING 6
#define RING_SLOW 7
#define RING_IDLE 8

static volatile sig_atomic_t catch_up;

static void on_usr1(int sig)
{
	catch_up = 1;
}

struct conn {
	struct ringtap_client *c;
	int kind;
	bool ended;
	bool clean;			/* ended by the daemon's Bye: every loss was reported */
	int seq_field;			/* index of "seq" in the Schema, -1 until known */
	uint64_t delivered[MAX_CPUS], lost[MAX_CPUS];
	bool inexact[MAX_CPUS], seen[MAX_CPUS];
	uint64_t last_seq[MAX_CPUS], bad_seq[MAX_CPUS];
	/*
	 * Where records went missing without a loss report before them: the
	 * first such gap (the seqs on either side) and how many in all. Losses
	 * are reported before the records that follow them, so a jump in seq
	 * larger than what was reported since the last record is unexplained.
	 */
	uint64_t first_seq[MAX_CPUS], lost_since[MAX_CPUS], unexplained[MAX_CPUS];
	uint64_t gap_from[MAX_CPUS], gap_to[MAX_CPUS];
	uint64_t lost_first[MAX_CPUS];
	uint64_t next_read_ns;
	/* RAW: the pages are walked with the kernel's own header_page and format. */
	struct tep_handle *tep;
	struct kbuffer *kb;
	struct tep_format_field *seq_at;
	int test_id;
};

/* Whether connection k waits now: a slow reader until its next turn, an idle one until SIGUSR1. */
static bool waiting(const struct conn *k, uint64_t now)
{
	if (catch_up)
		return false;
	return k->kind == RING_IDLE ||
	       ((k->kind == SLOW || k->kind == RING_SLOW) && now < k->next_read_ns);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/* One record of the test source on cpu, with its sequence number. */
static void saw(struct conn *k, unsigned int cpu, uint64_t seq)
{
	k->delivered[cpu]++;
	if (k->seen[cpu] && seq <= k->last_seq[cpu])
		k->bad_seq[cpu]++;
	if (!k->seen[cpu]) {
		k->first_seq[cpu] = seq;
		k->lost_first[cpu] = k->lost_since[cpu];
	}
	if (k->seen[cpu] && seq > k->last_seq[cpu] + 1 + k->lost_since[cpu]) {
		if (!k->unexplained[cpu]) {
			k->gap_from[cpu] = k->last_seq[cpu];
			k->gap_to[cpu] = seq;
		}
		k->unexplained[cpu] += seq - k->last_seq[cpu] - 1 - k->lost_since[cpu];
	}
	k->lost_since[cpu] = 0;
	k->seen[cpu] = true;
	k->last_seq[cpu] = seq;
}

/* The format texts and the page layout, once the Welcome and the Schema have come. */
static bool raw_ready(struct conn *k)
{
	const Ringtap__Welcome *w;
	const Ringtap__Schema *s;
	struct tep_event *e;

	if (k->kb)
		return true;
	w = ringtap_welcome(k->c);
	s = ringtap_find_schema(k->c, "ringtap_test", "ringtap_test");
	if (!w || !w->layout || !s || !s->format)
		return false;
	k->tep = tep_alloc();
	if (!k->tep)
		exit(1);
	tep_set_long_size(k->tep, (int)w->layout->long_size);
	tep_set_page_size(k->tep, (int)w->layout->sub_buffer_size);
	if (tep_parse_header_page(k->tep, w->layout->header_page, strlen(w->layout->header_page),
				  (int)w->layout->long_size) ||
	    tep_parse_event(k->tep, s->format, strlen(s->format), "ringtap_test")) {
		fprintf(stderr, "raw: the daemon's header_page or format does not parse\n");
		exit(1);
	}
	e = tep_find_event_by_name(k->tep, "ringtap_test", "ringtap_test");
	k->seq_at = e ? tep_find_field(e, "seq") : NULL;
	k->kb = tep_kbuffer(k->tep);
	if (!k->seq_at || !k->kb) {
		fprintf(stderr, "raw: no seq field in the test event's format\n");
		exit(1);
	}
	k->test_id = e->id;
	return true;
}

/* A RAW page: its test records, found and numbered here, not as the daemon counted. */
static void take_page(struct conn *k, unsigned int cpu, const ProtobufCBinaryData *page)
{
	/* kbuffer reads the page in place: a copy it may keep, zeroed past the end. */
	uint8_t *copy = calloc(1, page->len + 64);
	unsigned long long ts, seq;
	void *rec;

	if (!copy || !raw_ready(k))
		exit(1);
	memcpy(copy, page->data, page->len);
	kbuffer_load_subbuffer(k->kb, copy);
	for (rec = kbuffer_read_event(k->kb, &ts); rec; rec = kbuffer_next_event(k->kb, &ts)) {
		struct tep_record r = { .data = rec, .size = (int)kbuffer_event_size(k->kb) };

		if (tep_data_type(k->tep, &r) != k->test_id)
			continue;
		if (tep_read_number_field(k->seq_at, rec, &seq)) {
			fprintf(stderr, "raw: a test record without its seq\n");
			exit(1);
		}
		saw(k, cpu, seq);
	}
	free(copy);
}

static void take(struct conn *k, const struct ringtap_event *ev)
{
	unsigned int cpu = ev->cpu < MAX_CPUS ? ev->cpu : 0;
	uint64_t seq;

	switch (ev->kind) {
	case RINGTAP_RECORD:
		if (k->seq_field < 0)
			for (size_t i = 0; i < ev->schema->n_fields; i++)
				if (!strcmp(ev->schema->fields[i]->name, "seq"))
					k->seq_field = (int)i;
		if (k->seq_field < 0 || (size_t)k->seq_field >= ev->record->n_fields) {
			fprintf(stderr, "decoded: a test record without its seq\n");
			exit(1);
		}
		saw(k, cpu, ev->record->fields[k->seq_field]->u);
		break;
	case RINGTAP_FIXED:
		if (ev->fixed->data.len < PADDED_2012_SEQ_AT + sizeof(seq)) {
			fprintf(stderr, "fixed: a record of %zu bytes\n", ev->fixed->data.len);
			exit(1);
		}
		memcpy(&seq, ev->fixed->data.data + PADDED_2012_SEQ_AT, sizeof(seq));
		saw(k, cpu, seq);
		break;
	case RINGTAP_PAGE:
		take_page(k, cpu, ev->page);
		break;
	case RINGTAP_LOST:
		k->lost[cpu] += ev->lost->count;
		k->lost_since[cpu] += ev->lost->count;
		if (ev->lost->has_count_exact && !ev->lost->count_exact)
			k->inexact[cpu] = true;
		break;
	default:
		break;
	}
}

int main(int argc, char **argv)
{
	static const char *const events[] = { "ringtap_test:ringtap_test", NULL };
	static const uint32_t cpu0[] = { 0 };
	struct conn *conns;
	struct pollfd *pfd;
	int n, open_conns, rc = 0;

	int chosen[128], n_chosen = 0;

	if (argc < 3 || argc > 4 || (n = atoi(argv[2])) <= 0) {
		fprintf(stderr, "usage: rt-guest-load SOCKET N [KIND,...]\n");
		return 2;
	}
	for (char *save = NULL, *t = argc == 4 ? strtok_r(argv[3], ",", &save) : NULL;
	     t && n_chosen < 128; t = strtok_r(NULL, ",", &save)) {
		int k = 0;

		while (k < (int)N_KINDS && strcmp(kinds[k], t))
			k++;
		if (k == (int)N_KINDS) {
			fprintf(stderr, "rt-guest-load: unknown kind '%s'\n", t);
			return 2;
		}
		chosen[n_chosen++] = k;
	}
	conns = calloc((size_t)n, sizeof(*conns));
	pfd = calloc((size_t)n, sizeof(*pfd));
	if (!conns || !pfd)
		return 1;
	for (int i = 0; i < n; i++) {
		struct ringtap_client_opts o = {
			.socket_path = argv[1],
			.client_name = "load",
			.events = events,
		};
		struct ringtap_connect_error err;

		conns[i].kind = n_chosen ? chosen[i % n_chosen] : i % 5;
		conns[i].seq_field = -1;
		if (conns[i].kind == 1) {
			o.cpus = cpu0;
			o.n_cpus = 1;
		} else if (conns[i].kind == 2) {
			o.encoding = RINGTAP__ENCODING__FIXED;
		} else if (conns[i].kind == 3) {
			o.filter = "cpu == 1";
		} else if (conns[i].kind == RAW) {
			o.encoding = RINGTAP__ENCODING__RAW;
		} else if (conns[i].kind >= RING) {
			o.transport = RINGTAP_TRANSPORT_RING;
		}
		if (ringtap_connect(&conns[i].c, &o, &err)) {
			fprintf(stderr, "conn %d: %s\n", i, err.text);
			return 1;
		}
		if (ringtap_uses_ring(conns[i].c) != (conns[i].kind >= RING)) {
			fprintf(stderr, "conn %d (%s): the ring is %s\n", i, kinds[conns[i].kind],
				conns[i].kind >= RING ? "not in use" : "in use");
			return 1;
		}
	}
	signal(SIGUSR1, on_usr1);
	printf("load: %d subscribed\n", n);
	fflush(stdout);
	open_conns = n;
	while (open_conns > 0) {
		uint64_t t = now_ns();

		for (int i = 0; i < n; i++) {
			pfd[i].fd = conns[i].ended ? -1 : ringtap_fd(conns[i].c);
			pfd[i].events = POLLIN;
			/* A slow reader is not even polled until its next turn. */
			if (waiting(&conns[i], t))
				pfd[i].fd = -1;
		}
		if (poll(pfd, (nfds_t)n, 2) < 0 && errno != EINTR)
			return 1;
		for (int i = 0; i < n; i++) {
			struct conn *k = &conns[i];
			struct ringtap_event ev;
			int got;

			if (k->ended || waiting(k, now_ns()))
				continue;
			while ((got = ringtap_next(k->c, &ev, 0)) != 0) {
				if (got == -EINTR)
					continue;
				if (got < 0 || ev.kind == RINGTAP_END || ev.kind == RINGTAP_ERROR_FRAME) {
					if (got < 0 || ev.kind == RINGTAP_ERROR_FRAME) {
						fprintf(stderr, "conn %d: %s\n", i,
							got < 0 ? ringtap_error_text(k->c) :
								  ev.error->text);
						rc = 1;
					}
					k->ended = true;
					k->clean = got > 0 && ev.kind == RINGTAP_END && ev.end_clean;
					open_conns--;
					break;
				}
				take(k, &ev);
				if ((k->kind == SLOW || k->kind == RING_SLOW) && !catch_up &&
				    ev.kind == RINGTAP_RECORD) {
					k->next_read_ns = now_ns() + 20000000;
					break;
				}
			}
		}
	}
	for (int i = 0; i < n; i++) {
		for (int cpu = 0; cpu < MAX_CPUS; cpu++) {
			struct conn *k = &conns[i];

			if (!k->delivered[cpu] && !k->lost[cpu])
				continue;
			printf("conn %d %s cpu%d delivered %" PRIu64 " lost %" PRIu64
			       " exact %d dup %" PRIu64 "\n", i, kinds[k->kind], cpu,
			       k->delivered[cpu], k->lost[cpu], !k->inexact[cpu], k->bad_seq[cpu]);
			if (k->bad_seq[cpu])
				rc = 1;
			if (k->seen[cpu])
				printf("seqs %d cpu%d first %" PRIu64 " last %" PRIu64 " unexplained %"
				       PRIu64 " after %" PRIu64 " before %" PRIu64 " lostfirst %"
				       PRIu64 " lostlast %" PRIu64 "\n", i, cpu, k->first_seq[cpu],
				       k->last_seq[cpu], k->unexplained[cpu], k->gap_from[cpu],
				       k->gap_to[cpu], k->lost_first[cpu], k->lost_since[cpu]);
		}
		printf("end %d %s\n", i, conns[i].clean ? "clean" : "cut");
		ringtap_close(conns[i].c);
		kbuffer_free(conns[i].kb);
		tep_free(conns[i].tep);
	}
	free(conns);
	free(pfd);
	return rc;
}
