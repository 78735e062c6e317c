// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ringtapd: options -> tracefs session -> layout -> per-CPU readers -> one
 * event loop that drains every CPU on a timer -> decoder -> output.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event-parse.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <trace-seq.h>

#include "cpu_reader.h"
#include "decode.h"
#include "layout.h"
#include "log.h"
#include "server.h"
#include "text.h"
#include "tracefs.h"
#include "util.h"

struct cpu_account {
	unsigned long long records, unknown;
	unsigned long long missed_exact;	/* counts the kernel stored in pages */
	unsigned long long missed_pages_inexact;	/* pages that said "lost some" only */
	unsigned long long malformed_pages;
};

struct ringtapd {
	struct rt_session_opts opts;
	struct rt_server_opts server_opts;
	char **event_globs;
	bool to_stdout;
	bool once;
	unsigned int wait_subscribers;	/* read nothing until this many subscribed */
	unsigned int text_flags;
	unsigned int drain_ms;
	unsigned int max_pages_per_pass;
	uint64_t duration_us;

	struct rt_session *session;
	struct rt_layout *layout;
	struct rt_decoder *decoder;
	struct rt_server *server;
	struct rt_cpu_reader *readers;
	struct cpu_account *acct;
	int ncpus;
	sd_event *loop;
	struct trace_seq line;
	FILE *out;
	bool stopping;		/* tracing is off; waiting for subscribers to take the rest */
	bool abandoned;		/* past the deadline: the rest became Lost reports */
	uint64_t stop_deadline;
};

static void usage(FILE *f)
{
	fputs("Usage: ringtapd [OPTIONS]\n"
	      "Reads every CPU's ring buffer in a private tracefs instance, learns the event\n"
	      "layout from tracefs and decodes the events.\n\n"
	      "Serves subscribers on a Unix socket (systemd socket activation or its own),\n"
	      "or prints decoded records with --stdout.\n\n"
	      "  -s, --socket=PATH       socket to bind without systemd\n"
	      "                          (default /run/ringtap/ringtapd.sock)\n"
	      "  -g, --group=NAME        members may subscribe (default ringtap; root always)\n"
	      "      --max-queue-kb=KB   per-subscriber queue before records drop (default 4096)\n"
	      "      --max-clients=N     subscribers at once (default 64)\n"
	      "      --wait-subscribers=N  read nothing until N clients subscribed (tests,\n"
	      "                          replays of a captured tree)\n"
	      "  -e, --events=LIST       comma-separated system:event globs to enable from the\n"
	      "                          start (default with --stdout: ringtap_test:*)\n"
	      "  -i, --instance=NAME     tracefs instance name (default ringtap)\n"
	      "  -b, --buffer-kb=KB      per-CPU ring buffer size\n"
	      "  -C, --clock=NAME        trace clock (default: the kernel's)\n"
	      "  -t, --tracing-dir=DIR   read a tracefs tree at DIR as it is (e.g. a captured\n"
	      "                          fixture); implies no instance unless -i is given\n"
	      "      --stdout            print decoded records as text on standard output\n"
	      "      --common            with --stdout, add every common field\n"
	      "      --no-time           with --stdout, leave out timestamps\n"
	      "      --once              drain what the buffers hold, then exit\n"
	      "  -d, --duration=SEC      stop after SEC seconds\n"
	      "      --drain-ms=MS       drain period (default 50)\n"
	      "      --max-pages=N       pages taken from one CPU per pass (default 256)\n"
	      "  -h, --help              this text\n"
	      "  -V, --version           version\n",
	      f);
}

static int split_list(const char *csv, char ***out)
{
	size_t n = 0;
	char **list = NULL, *copy = strdup(csv), *save = NULL;

	if (!copy)
		return -ENOMEM;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char **nl = realloc(list, (n + 2) * sizeof(*list));

		if (!nl || !(nl[n] = strdup(tok))) {
			free(nl ? nl : list);
			free(copy);
			return -ENOMEM;
		}
		list = nl;
		list[++n] = NULL;
	}
	free(copy);
	*out = list;
	return n ? 0 : -EINVAL;
}

enum {
	OPT_STDOUT = 256,
	OPT_COMMON,
	OPT_NO_TIME,
	OPT_ONCE,
	OPT_DRAIN_MS,
	OPT_MAX_PAGES,
	OPT_MAX_QUEUE,
	OPT_MAX_CLIENTS,
	OPT_WAIT_SUBSCRIBERS,
};

static int parse_args(struct ringtapd *d, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "events", required_argument, NULL, 'e' },
		{ "socket", required_argument, NULL, 's' },
		{ "group", required_argument, NULL, 'g' },
		{ "max-queue-kb", required_argument, NULL, OPT_MAX_QUEUE },
		{ "max-clients", required_argument, NULL, OPT_MAX_CLIENTS },
		{ "wait-subscribers", required_argument, NULL, OPT_WAIT_SUBSCRIBERS },
		{ "instance", required_argument, NULL, 'i' },
		{ "buffer-kb", required_argument, NULL, 'b' },
		{ "clock", required_argument, NULL, 'C' },
		{ "tracing-dir", required_argument, NULL, 't' },
		{ "duration", required_argument, NULL, 'd' },
		{ "stdout", no_argument, NULL, OPT_STDOUT },
		{ "common", no_argument, NULL, OPT_COMMON },
		{ "no-time", no_argument, NULL, OPT_NO_TIME },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "drain-ms", required_argument, NULL, OPT_DRAIN_MS },
		{ "max-pages", required_argument, NULL, OPT_MAX_PAGES },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	const char *events = NULL;
	int c;

	d->server_opts.socket_path = "/run/ringtap/ringtapd.sock";
	d->server_opts.group = "ringtap";
	d->server_opts.max_queue = 4096 << 10;
	d->server_opts.max_clients = 64;
	d->drain_ms = 50;
	d->max_pages_per_pass = 256;
	while ((c = getopt_long(argc, argv, "e:s:g:i:b:C:t:d:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			events = optarg;
			break;
		case 's':
			d->server_opts.socket_path = optarg;
			break;
		case 'g':
			d->server_opts.group = optarg;
			break;
		case OPT_MAX_QUEUE:
			d->server_opts.max_queue = strtoul(optarg, NULL, 10) << 10;
			break;
		case OPT_WAIT_SUBSCRIBERS:
			d->wait_subscribers = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case OPT_MAX_CLIENTS:
			d->server_opts.max_clients = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'i':
			d->opts.instance_name = optarg;
			break;
		case 'b':
			d->opts.buffer_kb = strtoul(optarg, NULL, 10);
			break;
		case 'C':
			d->opts.clock = optarg;
			break;
		case 't':
			d->opts.tracing_dir = optarg;
			break;
		case 'd':
			d->duration_us = (uint64_t)(strtod(optarg, NULL) * 1e6);
			break;
		case OPT_STDOUT:
			d->to_stdout = true;
			break;
		case OPT_COMMON:
			d->text_flags |= RT_TEXT_COMMON;
			break;
		case OPT_NO_TIME:
			d->text_flags |= RT_TEXT_NO_TIME;
			break;
		case OPT_ONCE:
			d->once = true;
			break;
		case OPT_DRAIN_MS:
			d->drain_ms = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case OPT_MAX_PAGES:
			d->max_pages_per_pass = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("ringtapd %s\n", RINGTAP_VERSION);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ringtapd: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (!d->drain_ms)
		d->drain_ms = 1;
	if (!events)
		events = d->to_stdout ? "ringtap_test:*" : NULL;
	if (events && split_list(events, &d->event_globs)) {
		fprintf(stderr, "ringtapd: bad --events list '%s'\n", events);
		return -EINVAL;
	}
	return 0;
}

static int on_record(const struct rt_record *rec, void *ctx)
{
	struct ringtapd *d = ctx;

	d->acct[rec->cpu].records++;
	if (!rec->event)
		d->acct[rec->cpu].unknown++;
	if (d->server)
		rt_server_record(d->server, rec);
	if (!d->to_stdout)
		return 0;
	trace_seq_reset(&d->line);
	rt_record_text(&d->line, rec, d->layout, d->text_flags);
	trace_seq_terminate(&d->line);
	fputs(d->line.buffer, d->out);
	fputc('\n', d->out);
	return 0;
}

static int on_page(int cpu, const uint8_t *page, unsigned int len, void *ctx)
{
	struct ringtapd *d = ctx;
	struct cpu_account *a = &d->acct[cpu];
	struct rt_page_result res;
	int ret;

	ret = rt_decode_page(d->decoder, (unsigned int)cpu, page, len, on_record, d, &res);
	if (ret == -EBADMSG) {
		a->malformed_pages++;
		rt_log(LOG_WARNING, "cpu %d: malformed page skipped (%s)", cpu, res.error);
		if (d->to_stdout)
			fprintf(d->out, "# cpu %d: malformed page skipped (%s)\n", cpu, res.error);
		/* Its records are lost, how many is unknown: subscribers are told so. */
		if (d->server)
			rt_server_kernel_loss(d->server, (unsigned int)cpu, 0, false, 0);
	} else if (res.missed) {
		/* The kernel lost events before this page's first record. */
		if (res.missed_exact)
			a->missed_exact += res.missed_count;
		else
			a->missed_pages_inexact++;
		if (d->server)
			rt_server_kernel_loss(d->server, (unsigned int)cpu, res.missed_count,
					      res.missed_exact, res.timestamp);
		if (d->to_stdout && res.missed_exact)
			fprintf(d->out, "# cpu %d: lost %" PRIu64 " events before %" PRIu64 "\n", cpu,
				res.missed_count, res.timestamp);
		else if (d->to_stdout)
			fprintf(d->out, "# cpu %d: lost events (count unknown) before %" PRIu64 "\n",
				cpu, res.timestamp);
	}
	if (d->server) {
		if (ret != -EBADMSG)
			rt_server_page(d->server, (unsigned int)cpu, page, len, res.records,
				       res.timestamp);
		rt_server_end_page(d->server);
	}
	return ret == -EBADMSG ? 0 : ret;
}

/* One pass over every CPU; returns the pages read, or -errno. */
static int drain_all(struct ringtapd *d, unsigned int max_pages)
{
	int total = 0;

	for (int cpu = 0; cpu < d->ncpus; cpu++) {
		int n = rt_cpu_reader_drain(&d->readers[cpu], max_pages, on_page, d);

		if (n < 0) {
			fprintf(stderr, "ringtapd: reading cpu%d: %s\n", cpu, strerror(-n));
			return n;
		}
		total += n;
	}
	fflush(d->out);
	return total;
}

static bool all_eof(const struct ringtapd *d)
{
	for (int cpu = 0; cpu < d->ncpus; cpu++)
		if (!d->readers[cpu].eof)
			return false;
	return true;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/*
 * Stopping: tracing off, everything the kernel holds read, then up to two
 * seconds for subscribers to take what is queued for them; then what a slow
 * one still has queued is dropped and reported to it, with one more second
 * for that report.
 */
static void begin_stop(struct ringtapd *d)
{
	if (d->stopping)
		return;
	d->stopping = true;
	sd_notify(0, "STOPPING=1");
	rt_session_stop(d->session);
	drain_all(d, 0);
	d->stop_deadline = now_us() + 2000000;
}

static int on_drain_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct ringtapd *d = userdata;
	uint64_t next_us = d->drain_ms * 1000ULL;
	int n;

	if (d->stopping) {
		if (!d->server || rt_server_drained(d->server))
			return sd_event_exit(d->loop, 0);
		if (now_us() > d->stop_deadline) {
			if (d->abandoned)
				return sd_event_exit(d->loop, 0);
			/* Too slow for the grace: what it did not take is reported lost. */
			rt_server_abandon(d->server);
			d->abandoned = true;
			d->stop_deadline = now_us() + 1000000;
		}
		next_us = 10000;
	} else if (d->server && rt_server_subscribers(d->server) < d->wait_subscribers) {
		next_us = 10000;
	} else {
		d->wait_subscribers = 0;	/* once reached, later departures do not pause us */
		n = drain_all(d, d->max_pages_per_pass);
		if (n < 0)
			return sd_event_exit(d->loop, 1);
		if (d->once && (n == 0 || all_eof(d))) {
			begin_stop(d);
			next_us = 0;
		} else if (n >= (int)(d->max_pages_per_pass * d->ncpus)) {
			/* Pages left behind by the per-pass cap: come back at once. */
			next_us = 0;
		}
	}
	return sd_event_source_set_time_relative(s, next_us) ?:
	       sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static int on_stop_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	begin_stop(userdata);
	return 0;
}

static int on_duration(sd_event_source *s, uint64_t usec, void *userdata)
{
	begin_stop(userdata);
	return 0;
}

static void report(struct ringtapd *d)
{
	for (int cpu = 0; cpu < d->ncpus; cpu++) {
		struct cpu_account *a = &d->acct[cpu];
		struct rt_cpu_stats st = { 0 };

		rt_session_cpu_stats(d->session, cpu, &st);
		fprintf(stderr,
			"ringtapd: cpu%d: %llu pages, %llu records, %llu unknown, lost %llu counted + %llu pages "
			"uncounted, %llu malformed pages; kernel: overrun %llu, commit_overrun %llu, "
			"dropped %llu\n",
			cpu, d->readers[cpu].pages, a->records, a->unknown, a->missed_exact, a->missed_pages_inexact,
			a->malformed_pages, st.overrun, st.commit_overrun, st.dropped_events);
	}
}

static int run(struct ringtapd *d)
{
	__attribute__((cleanup(sd_event_source_unrefp))) sd_event_source *timer = NULL, *stop = NULL;
	const char *why = "";
	int ret;

	ret = rt_session_open(&d->session, &d->opts, &why);
	if (ret) {
		fprintf(stderr, "ringtapd: tracefs: %s: %s\n", why, strerror(-ret));
		return ret;
	}
	if (d->session->reclaimed)
		fprintf(stderr, "ringtapd: removed a stale instance left by an earlier run\n");
	ret = rt_session_layout(d->session, &d->layout, &why);
	if (ret) {
		fprintf(stderr, "ringtapd: layout: %s: %s\n", why, strerror(-ret));
		return ret;
	}
	fprintf(stderr, "ringtapd: trace_entry: %u bytes, common fields", d->layout->common_size);
	for (unsigned int i = 0; i < d->layout->n_common; i++)
		fprintf(stderr, "%c%s", i ? ',' : ' ', d->layout->common[i].name);
	fprintf(stderr, "; sub-buffer %u bytes, long %u, clock %s, %d CPUs\n",
		d->layout->sub_buffer_size, d->layout->long_size,
		d->session->clock ? d->session->clock : "?", d->session->ncpus);
	ret = d->event_globs ? rt_session_enable(d->session, d->layout,
						 (const char *const *)d->event_globs, &why) : 0;
	if (ret < 0) {
		fprintf(stderr, "ringtapd: enabling events: %s: %s\n", why, strerror(-ret));
		return ret;
	}
	ret = rt_session_symbols(d->session, d->layout);
	if (ret < 0)
		fprintf(stderr, "ringtapd: kernel symbols: %s; pointers stay addresses\n",
			strerror(-ret));
	else if (ret > 0)
		fprintf(stderr, "ringtapd: %d kernel symbols loaded for pointer fields\n", ret);
	ret = rt_decoder_new(&d->decoder, d->layout);
	if (ret)
		return ret;
	d->ncpus = d->session->ncpus;
	d->readers = calloc(d->ncpus, sizeof(*d->readers));
	d->acct = calloc(d->ncpus, sizeof(*d->acct));
	if (!d->readers || !d->acct)
		return -ENOMEM;
	for (int cpu = 0; cpu < d->ncpus; cpu++) {
		ret = rt_cpu_reader_open(&d->readers[cpu], d->session, cpu,
					 d->layout->sub_buffer_size);
		if (ret) {
			fprintf(stderr, "ringtapd: opening cpu%d's trace_pipe_raw: %s\n", cpu,
				strerror(-ret));
			return ret;
		}
	}
	ret = sd_event_default(&d->loop);
	if (ret < 0)
		return ret;
	if ((ret = sd_event_add_signal(d->loop, NULL, SIGINT, on_stop_signal, d)) < 0 ||
	    (ret = sd_event_add_signal(d->loop, NULL, SIGTERM, on_stop_signal, d)) < 0 ||
	    (ret = sd_event_add_time_relative(d->loop, &timer, CLOCK_MONOTONIC, 0, 1000,
					      on_drain_timer, d)) < 0)
		return ret;
	if (!d->to_stdout) {
		ret = rt_server_new(&d->server, d->loop, &d->server_opts, d->session, d->layout);
		if (ret < 0)
			return ret;
	}
	if (d->duration_us &&
	    (ret = sd_event_add_time_relative(d->loop, &stop, CLOCK_MONOTONIC, d->duration_us,
					      1000, on_duration, d)) < 0)
		return ret;
	ret = rt_session_start(d->session);
	if (ret) {
		fprintf(stderr, "ringtapd: turning tracing on: %s\n", strerror(-ret));
		return ret;
	}
	fprintf(stderr, "ringtapd: tracing %zu event(s) on %d CPUs\n", d->session->n_events, d->ncpus);
	sd_notify(0, "READY=1");
	ret = sd_event_loop(d->loop);
	begin_stop(d);	/* no-op unless the loop ended on an error */
	report(d);
	return ret > 0 ? -EIO : ret;
}

static void teardown(struct ringtapd *d)
{
	for (int cpu = 0; d->readers && cpu < d->ncpus; cpu++)
		rt_cpu_reader_close(&d->readers[cpu]);
	free(d->readers);
	free(d->acct);
	rt_server_free(d->server);
	rt_decoder_free(d->decoder);
	rt_layout_free(d->layout);
	rt_session_close(d->session);
	sd_event_unref(d->loop);
	trace_seq_destroy(&d->line);
	if (d->event_globs)
		for (char **g = d->event_globs; *g; g++)
			free(*g);
	free(d->event_globs);
}

int main(int argc, char **argv)
{
	struct ringtapd d = { .out = stdout };
	sigset_t mask;
	int ret;

	/*
	 * Block the stop signals first: one that arrives during setup then waits
	 * for the loop (which stops at once and cleans up) instead of killing us
	 * with the instance left behind, or being lost where it was ignored.
	 */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);

	trace_seq_init(&d.line);
	ret = parse_args(&d, argc, argv);
	if (!ret)
		ret = run(&d);
	teardown(&d);
	return ret ? 1 : 0;
}
