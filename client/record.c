// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ringtap record -o FILE: asks ringtapd for the RAW encoding and hands what
 * it sends to the recording (recording.c: a trace.dat, or the frames as they
 * came); connects again after a restart with --reconnect; progress on
 * stderr when it is a terminal (or with --progress), a summary at the end;
 * stops on a signal or --duration.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli-tls.h"
#include "event-list.h"
#include "reconnect.h"
#include "record.h"
#include "recording.h"
#include "ringtap.h"
#include "util.h"

enum { OPT_FORMAT = 0x100, OPT_CLOCK_FILE, OPT_PROGRESS };

enum record_format {
	FORMAT_AUTO,		/* by the file name */
	FORMAT_PROTOBUF,
	FORMAT_TRACEDAT,
};

/* How long the daemon has to send what it queued, once asked to end the stream. */
#define END_GRACE_S 5
/* The latency bound asked without --max-latency (why: where it is set). */
#define RECORD_MAX_LATENCY_MS 1000

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

static void usage(FILE *f)
{
	fputs("Usage: ringtap record -o FILE [OPTIONS]\n"
	      "Records the daemon's raw stream (RAW encoding: format texts, sub-buffers as the\n"
	      "kernel wrote them, loss reports) into FILE: a trace-cmd trace.dat (version 6,\n"
	      "for trace-cmd report and KernelShark) when FILE ends in .dat, otherwise\n"
	      "delimited protobuf frames as the daemon sent them.\n"
	      "FILE is written under a temporary name beside it and replaces FILE at the\n"
	      "end, once ringtapd streamed: a run that fails before leaves FILE as it was.\n"
	      "Shows progress on standard error when it is a terminal, and a summary at\n"
	      "the end; stops on Ctrl-C, SIGTERM, SIGHUP or --duration.\n\n"
	      "  -o, --output=FILE      the capture file (required)\n"
	      "      --format=FORMAT    trace.dat or protobuf, whatever FILE is called\n"
	      "  -s, --socket=ADDRESS   ringtapd's socket (default " RINGTAP_DEFAULT_SOCKET "),\n"
	      "                         or its TCP listener: tls://HOST:PORT, tcp://HOST:PORT\n"
	      CLI_TLS_HELP
	      "  -e, --events=LIST      comma-separated system:event globs; a second -e adds\n"
	      "                         to the first (default " CLI_DEFAULT_EVENTS ")\n"
	      "  -d, --duration=SEC     stop after SEC seconds\n"
	      "      --clock-file=FILE  append the host's boot and (trace clock, realtime)\n"
	      "                         pairs, one per Heartbeat, to align hosts later\n"
	      "  -r, --reconnect        when ringtapd restarts, connect again and go on (the\n"
	      "                         gap is counted in each CPU's stats)\n"
	      "      --max-latency=MS   records may reach us this late (10-60000; default\n"
	      "                         1000: a file is read afterwards, and a longer bound\n"
	      "                         lets ringtapd wake less often)\n"
	      CLI_TRANSPORT_HELP
	      "      --progress         a progress line every second even when standard\n"
	      "                         error is no terminal (ringtap collect reads them)\n"
	      "  -h, --help             this text\n",
	      f);
}

/*
 * The daemon went away (a restart): connect again, as long as the same
 * kernel answers (the file's layout stays true), and mark the gap on every
 * CPU: what happened meanwhile is not in the file.
 */
static struct ringtap_client *connect_again(struct recording *r,
					    const struct ringtap_client_opts *opts,
					    const Ringtap__Welcome *was, double deadline,
					    struct ringtap_resume *place, int *status)
{
	const struct cli_reconnect how = { .wake_fd = -1, .stop = &stop, .deadline = deadline };
	struct ringtap_connect_error err;
	struct ringtap_client *c;
	const Ringtap__Welcome *w;
	double since = cli_now_s();
	char refused[512] = "";
	bool resumed = false;
	int ret;

	fprintf(stderr, "%sringtap record: ringtapd went away; reconnecting\n", recording_nl(r));
	ret = cli_reconnect(&c, opts, &how, place, &resumed, refused, sizeof(refused), &err);
	if (ret) {
		/* Stopped or out of time while waiting: the end asked for. */
		if (ret != -ECANCELED) {
			fprintf(stderr, "ringtap record: %s\n", err.text);
			*status = 1;
		}
		return NULL;
	}
	w = ringtap_welcome(c);
	if (strcmp(w->boot_id, was->boot_id) ||
	    strcmp(w->layout->header_page, was->layout->header_page) || w->cpus != r->cpus) {
		fprintf(stderr, "ringtap record: another boot or layout answered; the recording "
			"ends here\n");
		*status = CLI_EXIT_CUT;
		ringtap_close(c);
		return NULL;
	}
	if (resumed) {
		r->resumes++;
		fprintf(stderr, "ringtap record: reconnected after %.1f s and resumed where the "
			"stream was: nothing in between is missing unless reported lost\n",
			cli_now_s() - since);
		return c;
	}
	if (*refused)
		fprintf(stderr, "ringtap record: %s\n", refused);
	recording_gap(r);
	fprintf(stderr, "ringtap record: reconnected after %.1f s; events in between are not "
		"recorded\n", cli_now_s() - since);
	return c;
}

/*
 * The kernel saves a process's name when an event of it is traced: the
 * cmdlines sent at the start lack the processes the recording met. Ask
 * again at the end (pages still arriving meanwhile are kept), two seconds
 * at most; without an answer the file keeps the first ones.
 */
static void refresh_host_texts(struct recording *r, struct ringtap_client *c,
			       const struct ringtap_client_opts *opts)
{
	unsigned int had = r->host_texts;
	double until = cli_now_s() + 2;

	if (ringtap_update(c, opts))
		return;
	while (r->host_texts == had && cli_now_s() < until) {
		struct ringtap_event ev;
		int n = ringtap_next(c, &ev, 100);

		if (n < 0 || (n > 0 && ev.kind == RINGTAP_END))
			return;
		if (n > 0 && !recording_event(r, &ev))
			return;
	}
}

/* What the command line asks. */
struct record_args {
	struct ringtap_client_opts opts;
	enum record_format format;
	const char *path;
	FILE *clock;
	char *events;			/* every -e's list, joined */
	double duration;
	bool reconnect;
	bool progress;			/* every second: a terminal, or --progress */
};

static void record_args_free(struct record_args *a)
{
	if (a->clock)
		fclose(a->clock);
	free(a->events);
}

/* One option into a; false after saying what is wrong. */
static bool take_option(struct record_args *a, int opt)
{
	switch (opt) {
	case 'o':
		a->path = optarg;
		return true;
	case OPT_CLOCK_FILE:
		if (a->clock)
			fclose(a->clock);
		a->clock = fopen(optarg, "ae");
		if (!a->clock)
			fprintf(stderr, "ringtap record: %s: %s\n", optarg, strerror(errno));
		return a->clock != NULL;
	case OPT_FORMAT:
		if (!strcmp(optarg, "trace.dat")) {
			a->format = FORMAT_TRACEDAT;
		} else if (!strcmp(optarg, "protobuf")) {
			a->format = FORMAT_PROTOBUF;
		} else {
			fprintf(stderr, "ringtap record: --format wants trace.dat or protobuf, "
				"not '%s'\n", optarg);
			return false;
		}
		return true;
	case 's':
		a->opts.socket_path = optarg;
		return true;
	case 'e':
		if (cli_list_add(&a->events, optarg)) {
			fprintf(stderr, "ringtap record: out of memory\n");
			return false;
		}
		return true;
	case 'd':
		return cli_seconds("record", "--duration", optarg, &a->duration);
	case 'r':
		a->reconnect = true;
		return true;
	case OPT_PROGRESS:
		a->progress = true;
		return true;
	case CLI_OPT_MAX_LATENCY:
		if (!cli_latency(optarg, &a->opts.max_latency_ms)) {
			fprintf(stderr, "ringtap record: --max-latency wants milliseconds, "
				"not '%s'\n", optarg);
			return false;
		}
		return true;
	case CLI_OPT_TRANSPORT:
		if (!cli_transport(optarg, &a->opts.transport)) {
			fprintf(stderr, "ringtap record: --transport wants auto, ring or socket, "
				"not '%s'\n", optarg);
			return false;
		}
		return true;
	}
	return cli_tls_option(opt, optarg, &a->opts);
}

/* The command line into a: 0, 1 after --help, -1 after saying what is wrong. */
static int parse_record_args(int argc, char **argv, struct record_args *a)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "clock-file", required_argument, NULL, OPT_CLOCK_FILE },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "socket", required_argument, NULL, 's' },
		CLI_TLS_LONGOPTS,
		{ "events", required_argument, NULL, 'e' },
		{ "duration", required_argument, NULL, 'd' },
		{ "reconnect", no_argument, NULL, 'r' },
		{ "max-latency", required_argument, NULL, CLI_OPT_MAX_LATENCY },
		{ "transport", required_argument, NULL, CLI_OPT_TRANSPORT },
		{ "progress", no_argument, NULL, OPT_PROGRESS },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int opt;

	while ((opt = getopt_long(argc, argv, ":o:s:e:d:rh", longopts, NULL)) != -1) {
		if (opt == 'h') {
			usage(stdout);
			return 1;
		}
		if (opt == '?' || opt == ':') {
			cli_bad_option("record", argv, opt);
			return -1;
		}
		if (!take_option(a, opt))
			return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "ringtap record: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (isatty(STDERR_FILENO))
		a->progress = true;
	if (!a->path) {
		fprintf(stderr, "ringtap record: -o FILE is required\n");
		return -1;
	}
	if (!a->events && !(a->events = strdup(CLI_DEFAULT_EVENTS))) {
		fprintf(stderr, "ringtap record: out of memory\n");
		return -1;
	}
	return 0;
}

/* --reconnect resumes: on the socket, or a ring reader from its place in the ring. */
static bool resumable(const struct record_args *a)
{
	return a->reconnect;
}

/*
 * The stream into the file until a signal, --duration or the daemon's end
 * (across restarts with --reconnect); closes c, or what replaced it.
 * Returns 0, 1 when the recording failed, CLI_EXIT_CUT when it ended
 * without ringtapd's Bye.
 */
static int record_until_end(struct recording *r, struct ringtap_client *c,
			    const struct record_args *a)
{
	const Ringtap__Welcome *welcome = ringtap_welcome(c);
	double start = cli_now_s(), next_progress = start + 1, end_by = 0;
	struct ringtap_client *next;
	/* --reconnect: the stream is resumable (record_main connected it so). */
	struct ringtap_resume *place = resumable(a) ? ringtap_resume_new() : NULL;
	bool ending = false;
	int ret = 0;

	while (!r->write_error) {
		struct ringtap_event ev;
		int n;

		if (!ending && (stop || (a->duration && cli_now_s() - start >= a->duration))) {
			/*
			 * The end: everything the daemon sent until now goes into the
			 * file. It is asked to end the stream and read to its end.
			 */
			recording_flush(r);
			if (r->tracedat && !ret)
				refresh_host_texts(r, c, &a->opts);
			if (ringtap_bye(c))
				break;
			ending = true;
			end_by = cli_now_s() + END_GRACE_S;
		}
		if (ending && cli_now_s() > end_by) {
			fprintf(stderr, "%sringtap record: ringtapd did not end the stream within %d s; "
				"the file holds what came until now\n", recording_nl(r), END_GRACE_S);
			break;
		}
		n = ringtap_next(c, &ev, 200);
		if (n == 0)
			recording_flush(r);
		if (n == -EINTR || n == 0)
			goto tick;
		if (n < 0 || ev.kind == RINGTAP_END) {
			if (n < 0)
				fprintf(stderr, "%sringtap record: %s\n", recording_nl(r),
					ringtap_error_text(c));
			else if (ending && !ev.end_clean)
				fprintf(stderr, "%sringtap record: the connection was cut before "
					"ringtapd's last report\n", recording_nl(r));
			else if (!ev.end_clean && !a->reconnect)
				fprintf(stderr, "%sringtap record: the connection to ringtapd was "
					"cut\n", recording_nl(r));
			if (ending || !a->reconnect) {
				ret = n < 0 ? 1 : ev.end_clean ? 0 : CLI_EXIT_CUT;
				break;
			}
			recording_flush(r);
			/* Where the file is, to resume from: its pages are those handed out. */
			if (place && ringtap_resume_save(c, place)) {
				ringtap_resume_free(place);
				place = NULL;
			}
			/* The old Welcome is what the new one must match: closed after. */
			next = connect_again(r, &a->opts, welcome,
					     a->duration ? start + a->duration : 0, place, &ret);
			ringtap_close(c);
			c = next;
			if (!c)
				break;
			ringtap_set_record_views(c, true);
			welcome = ringtap_welcome(c);
			recording_clock_boot(r, welcome);
			goto tick;
		}
		if (!recording_event(r, &ev)) {
			ret = 1;
			break;
		}
tick:
		if (cli_now_s() >= next_progress) {
			recording_flush(r);
			if (a->progress)
				recording_progress(r, false);
			next_progress += 1;
		}
	}
	recording_flush(r);
	/* The daemon is let go first: putting a big trace.dat together takes a while. */
	ringtap_close(c);
	ringtap_resume_free(place);
	return ret;
}

int cmd_record(int argc, char **argv)
{
	struct record_args a = { .opts = { .client_name = "ringtap record",
					   .transport = RINGTAP_TRANSPORT_RING_OR_SOCKET } };
	_cleanup_free_ const char **events = NULL;
	struct ringtap_connect_error err;
	struct ringtap_client *c;
	struct recording r;
	int ret;

	ret = parse_record_args(argc, argv, &a);
	if (!ret && !(events = cli_list_split(a.events))) {
		fprintf(stderr, "ringtap record: out of memory\n");
		ret = -1;
	}
	if (ret || recording_open(&r, a.path, a.format == FORMAT_TRACEDAT ||
				  (a.format == FORMAT_AUTO && ends_with(a.path, ".dat")))) {
		record_args_free(&a);
		return ret <= 0;
	}
	r.clock = a.clock;
	a.clock = NULL;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* A closed terminal too: what the capture's buffer holds is written out. */
	signal(SIGHUP, on_signal);
	/* A file size limit then stops the recording like a full disk, with the file kept. */
	signal(SIGXFSZ, SIG_IGN);
	/*
	 * Nobody reads a recording while it is written: a second's bound lets
	 * ringtapd drain every 750 ms instead of every 75 ms when no other
	 * subscriber asks for less, about half its CPU at 8,000 events/s
	 * (bench/RESULTS.md). A busy buffer is still drained when half full.
	 */
	if (!a.opts.max_latency_ms)
		a.opts.max_latency_ms = RECORD_MAX_LATENCY_MS;
	a.opts.events = events;
	a.opts.encoding = RINGTAP__ENCODING__RAW;
	a.opts.tap = recording_tap_bytes;
	a.opts.tap_ctx = &r;
	a.opts.host_texts = r.tracedat;
	if (resumable(&a) ? ringtap_connect_resumable(&c, &a.opts, NULL, &err) :
			  ringtap_connect(&c, &a.opts, &err)) {
		fprintf(stderr, "ringtap record: %s\n", err.text);
		ret = 1;
		goto out;
	}
	ringtap_set_record_views(c, true);
	if (recording_start(&r, ringtap_welcome(c))) {
		ringtap_close(c);
		ret = 1;
		goto out;
	}
	ret = record_until_end(&r, c, &a);
	recording_progress(&r, true);
	/* A failure (1) says more than a cut (CLI_EXIT_CUT). */
	if (recording_finish(&r))
		ret = 1;
out:
	if (recording_close(&r))
		ret = 1;
	record_args_free(&a);
	return ret;
}
