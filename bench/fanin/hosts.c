// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rt-fanin-hosts: simulated hosts publishing to NATS JetStream through
 * ringtapd's own publisher (daemon/nats.c, core/publish.c), each with its
 * own host name, boot id, connection and publisher thread, as that many
 * ringtapd processes would. The pages are a captured tree's, decoded once
 * and handed over page by page at a given rate, in a loop, each record's
 * timestamp set to the realtime clock when its page is handed over (so a
 * collector's --lag measures publish to collect). Bounded: PAGES pages per
 * host and SECONDS at most, then up to 30 s for acknowledgments.
 *
 * A host drains as ringtapd's pump does: the pages due since its last drain
 * go to the publisher a CPU after another, then rt_nats_end_drain (what the pump's drained()
 * calls), every FANIN_DRAIN_MS (ringtapd's drain_ms; 0, the default: each
 * pass of the loop, about 5 ms). FANIN_MAX_MESSAGE_KB is ringtapd's
 * nats_max_message_kb (0, the default: a page a message). A record's
 * timestamp is when its page was due, so a drain's wait is in the lag.
 *
 * usage: rt-fanin-hosts FIXTURE URLS FIRST HOSTS PAGES PAGES_PER_S SECONDS [BOOT]
 * Prints a line per host (offered, published, dropped, failed, sent again)
 * and the process's CPU time and peak memory.
 */
#include <inttypes.h>
#include <signal.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"
#include "nats.h"

static const char *const events[] = { "ringtap_test:*", "ftrace:print", NULL };

struct page {
	struct rt_record *recs;
	size_t n, cap;
	bool missed, exact;
	uint64_t missed_count;
	unsigned int cpu;
};

struct host {
	char name[32], boot[48];
	struct rt_host id;
	struct rt_nats *nats;
	uint64_t pages, offered;
	double due, drain;
};

static double now_s(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int keep(const struct rt_record *rec, void *ctx)
{
	struct page *pg = ctx;

	if (pg->n == pg->cap) {
		pg->cap = pg->cap ? 2 * pg->cap : 64;
		pg->recs = realloc(pg->recs, pg->cap * sizeof(*pg->recs));
		if (!pg->recs)
			return -ENOMEM;
	}
	pg->recs[pg->n++] = *rec;
	return 0;
}

/* Every page of every CPU, decoded once; the pages' bytes stay for the records. */
static struct page *load(struct fixture *fx, size_t *npages)
{
	size_t size = fx->layout->sub_buffer_size, n = 0;
	struct page *pages = NULL;

	for (int cpu = 0; cpu < fx->ncpus; cpu++) {
		size_t len;
		uint8_t *raw = fixture_pages(fx, cpu, &len);

		for (size_t off = 0; raw && off + size <= len; off += size) {
			struct rt_page_result res;
			struct page *pg;

			pages = realloc(pages, (n + 1) * sizeof(*pages));
			pg = &pages[n++];
			memset(pg, 0, sizeof(*pg));
			pg->cpu = (unsigned int)cpu;
			if (rt_decode_page(fx->decoder, (unsigned int)cpu, raw + off, size, keep, pg,
					   &res))
				return NULL;
			pg->missed = res.missed;
			pg->exact = res.missed_exact;
			pg->missed_count = res.missed_count;
		}
	}
	*npages = n;
	return pages;
}

/* due: when the page was written, on CLOCK_MONOTONIC. */
static void feed(struct host *h, const struct page *pg, double due)
{
	double wait = now_s(CLOCK_MONOTONIC) - due;
	uint64_t now = (uint64_t)((now_s(CLOCK_REALTIME) - (wait > 0 ? wait : 0)) * 1e9);

	if (pg->missed)
		rt_nats_kernel_loss(h->nats, pg->cpu, pg->missed_count, pg->exact, now, now);
	for (size_t i = 0; i < pg->n; i++) {
		struct rt_record rec = pg->recs[i];

		rec.timestamp = now;
		rt_nats_record(h->nats, &rec);
		h->offered += rec.event && (!strcmp(rec.event->system, "ringtap_test") ||
					    !strcmp(rec.event->name, "print"));
	}
	rt_nats_end_page(h->nats);
}

/*
 * The pages due by now, a CPU's after another's as the pump reads them
 * (rt_pump_drain), then the drain's end: a CPU's pages of a drain may share
 * a message (nats_max_message_kb).
 */
static void drain(struct host *h, const struct page *pages, size_t npages, int ncpus,
		  uint64_t per_host, double rate, double now)
{
	uint64_t n = 0;

	while (h->pages + n < per_host && h->due + (double)n / rate <= now)
		n++;
	for (int cpu = 0; cpu < ncpus; cpu++)
		for (uint64_t i = 0; i < n; i++) {
			const struct page *pg = &pages[(h->pages + i) % npages];

			if (pg->cpu == (unsigned int)cpu)
				feed(h, pg, h->due + (double)i / rate);
		}
	h->pages += n;
	h->due += (double)n / rate;
	rt_nats_end_drain(h->nats);
}

int main(int argc, char **argv)
{
	struct fixture fx;
	struct page *pages;
	struct host *hosts;
	struct rusage ru;
	size_t npages;
	unsigned int first, nhosts;
	uint64_t per_host, total_offered = 0, total_published = 0, total_lost = 0;
	double rate, seconds, start, deadline, drain_s;
	unsigned long max_kb;
	char root[2048], *slash;
	const char *boot = argc > 8 ? argv[8] : "boot";
	bool all_done = false;

	if (argc < 8) {
		fprintf(stderr, "usage: %s FIXTURE URLS FIRST HOSTS PAGES PAGES_PER_S SECONDS [BOOT]\n",
			argv[0]);
		return 2;
	}
	first = (unsigned int)strtoul(argv[3], NULL, 10);
	nhosts = (unsigned int)strtoul(argv[4], NULL, 10);
	per_host = strtoull(argv[5], NULL, 10);
	rate = strtod(argv[6], NULL);
	seconds = strtod(argv[7], NULL);
	snprintf(root, sizeof(root), "%s", argv[1]);
	slash = strrchr(root, '/');
	if (!slash || !nhosts || rate <= 0 || seconds <= 0)
		return 2;
	*slash = '\0';
	drain_s = getenv("FANIN_DRAIN_MS") ? strtod(getenv("FANIN_DRAIN_MS"), NULL) / 1e3 : 0;
	max_kb = getenv("FANIN_MAX_MESSAGE_KB") ? strtoul(getenv("FANIN_MAX_MESSAGE_KB"), NULL, 10)
						 : 0;
	signal(SIGPIPE, SIG_IGN);
	if (fixture_open(&fx, root, slash + 1, events) || !(pages = load(&fx, &npages)) || !npages)
		return 1;
	hosts = calloc(nhosts, sizeof(*hosts));
	start = now_s(CLOCK_MONOTONIC);
	for (unsigned int i = 0; i < nhosts; i++) {
		struct host *h = &hosts[i];
		struct rt_nats_opts o = { argv[2], "RINGTAP", events, 4096, max_kb, NULL, NULL, 0 };

		snprintf(h->name, sizeof(h->name), "sim%05u", first + i);
		snprintf(h->boot, sizeof(h->boot), "%s-%05u", boot, first + i);
		h->id = (struct rt_host){ h->name, "6.1-sim", h->boot, (unsigned int)fx.ncpus,
					  "realtime" };
		if (rt_nats_new(&h->nats, &o, &h->id, fx.layout, (unsigned int)fx.ncpus))
			return 1;
	}
	/*
	 * Every host connected and its stream looked at first (a thousand
	 * stream requests at once take JetStream seconds): then paced, none
	 * owing a burst.
	 */
	deadline = now_s(CLOCK_MONOTONIC) + 120;
	for (unsigned int ready = 0; ready < nhosts && now_s(CLOCK_MONOTONIC) < deadline;
	     usleep(20000))
		for (ready = 0; ready < nhosts && rt_nats_ready(hosts[ready].nats);)
			ready++;
	fprintf(stderr, "hosts %u: ready after %.1f s; a drain every %.0f ms, messages up to %lu KiB\n",
		nhosts, now_s(CLOCK_MONOTONIC) - start, drain_s * 1e3, max_kb);
	start = now_s(CLOCK_MONOTONIC);
	for (unsigned int i = 0; i < nhosts; i++) {
		/* Spread over one period, as independent hosts would be. */
		hosts[i].due = start + (double)i / nhosts / rate;
		hosts[i].drain = start + (double)i / nhosts * drain_s;
	}
	deadline = start + seconds;
	while (!all_done && now_s(CLOCK_MONOTONIC) < deadline) {
		double now = now_s(CLOCK_MONOTONIC);

		all_done = true;
		for (unsigned int i = 0; i < nhosts; i++) {
			struct host *h = &hosts[i];

			if (h->drain <= now) {
				drain(h, pages, npages, fx.ncpus, per_host, rate, now);
				h->drain = drain_s > 0 ? h->drain + drain_s : now;
			}
			all_done &= h->pages >= per_host;
			rt_nats_poll(h->nats);
		}
		usleep(5000);
	}
	/* The acknowledgments still owed, and the loss reports. */
	deadline = now_s(CLOCK_MONOTONIC) + 30;
	for (bool drained = false; !drained && now_s(CLOCK_MONOTONIC) < deadline; usleep(20000)) {
		drained = true;
		for (unsigned int i = 0; i < nhosts; i++) {
			rt_nats_poll(hosts[i].nats);
			drained &= rt_nats_drained(hosts[i].nats);
		}
	}
	for (unsigned int i = 0; i < nhosts; i++) {
		struct rt_nats_stats st;

		rt_nats_get_stats(hosts[i].nats, &st);
		printf("host %s boot %s: %" PRIu64 " offered, %" PRIu64 " published, %" PRIu64
		       " dropped, %" PRIu64 " failed, %" PRIu64 " sent again, %" PRIu64
		       " unacknowledged\n", hosts[i].name, hosts[i].boot, hosts[i].offered,
		       st.records - st.failed, st.dropped, st.failed, st.republished, st.pending);
		total_offered += hosts[i].offered;
		total_published += st.records - st.failed;
		total_lost += st.dropped + st.failed;
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("hosts %u: %" PRIu64 " offered, %" PRIu64 " published, %" PRIu64 " lost; cpu %.2f s "
	       "user %.2f s sys, max rss %ld KiB, %.1f s\n", nhosts, total_offered, total_published,
	       total_lost, (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss,
	       now_s(CLOCK_MONOTONIC) - start);
	fflush(stdout);
	/* rt_nats_free closes the NATS library for the whole process: the hosts end with it. */
	_exit(0);
}
