// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ringtap: the command line client. "stream" prints records from ringtapd
 * as the daemon's --stdout text or as JSON lines; "info" prints what the
 * daemon's Welcome says about the host and the kernel's ring buffer; the
 * other commands are dispatched to their own files.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "collect.h"
#include "collect-nats.h"
#include "cli-tls.h"
#include "event-list.h"
#include "reconnect.h"
#include "record.h"
#include "ringtap.h"
#include "status.h"
#include "util.h"

#define CLIENT_NAME "ringtap " RINGTAP_VERSION

static void usage(FILE *f)
{
	fputs("Usage: ringtap [--help|--version] COMMAND [OPTIONS]\n"
	      "Client of ringtapd, the ring buffer tracing daemon.\n\n"
	      "Commands:\n"
	      "  stream    print the records of the subscribed events as they come\n"
	      "  info      print the host, clock and ring buffer layout the daemon reports\n"
	      "  record    write the daemon's raw stream (pages and formats) to a file\n"
	      "  collect   record many daemons over TCP, a file per host; with --nats URL,\n"
	      "            what they publish to NATS JetStream\n"
	      "  status    print the daemon's counters (a table, Prometheus or OpenMetrics)\n\n"
	      "  -h, --help       this text; COMMAND --help for a command's options\n"
	      "  -V, --version    version\n",
	      f);
}

static void usage_stream(FILE *f)
{
	fputs("Usage: ringtap stream [OPTIONS]\n"
	      "Subscribes to events and prints one line per record, as ringtapd --stdout does:\n"
	      "  SEC.NSEC [CPU] SYSTEM:NAME pid=PID FIELD=VALUE ...\n"
	      "and \"# cpu N: lost M events (SOURCE)\" where events were lost. Stops on Ctrl-C,\n"
	      "SIGTERM, --count or --duration, then prints a summary on standard error.\n\n"
	      "  -s, --socket=ADDRESS   ringtapd's socket (default " RINGTAP_DEFAULT_SOCKET "),\n"
	      "                         or its TCP listener: tls://HOST:PORT, tcp://HOST:PORT\n"
	      CLI_TLS_HELP
	      "  -e, --events=LIST      comma-separated system:event globs; a second -e adds\n"
	      "                         to the first (default " CLI_DEFAULT_EVENTS ")\n"
	      "  -c, --cpus=LIST        only these CPUs, e.g. 0,2-3 (default: every CPU)\n"
	      "  -p, --pids=LIST        only these processes, e.g. 1,4242 (default: all)\n"
	      "  -F, --fields=LIST      only these fields of each record, e.g. seq,cpu\n"
	      "  -f, --filter=EXPR      only records for which EXPR holds, in the kernel's\n"
	      "                         filter syntax, e.g. 'seq < 10 && cpu == 1'\n"
	      "  -j, --json             one JSON object per line instead of text\n"
	      "  -n, --count=N          stop after N records\n"
	      "  -d, --duration=SEC     stop after SEC seconds (fractions allowed)\n"
	      "  -r, --reconnect        when ringtapd goes away, connect again (a \"# gap\" line\n"
	      "                         marks what was not recorded)\n"
	      "      --no-time          leave out timestamps\n"
	      "      --common           also print every record's common fields\n"
	      CLI_LATENCY_HELP
	      CLI_TRANSPORT_HELP
	      "  -h, --help             this text\n",
	      f);
}

static void usage_info(FILE *f)
{
	fputs("Usage: ringtap info [OPTIONS]\n"
	      "Prints the daemon's Welcome: host, kernel, trace clock, CPUs and the ring\n"
	      "buffer layout the kernel publishes. It subscribes to nothing.\n\n"
	      "  -s, --socket=ADDRESS   ringtapd's socket (default " RINGTAP_DEFAULT_SOCKET "),\n"
	      "                         or its TCP listener: tls://HOST:PORT, tcp://HOST:PORT\n"
	      CLI_TLS_HELP
	      "  -h, --help             this text\n",
	      f);
}

static void bad_value(const char *opt, const char *want, const char *value)
{
	fprintf(stderr, "ringtap stream: %s wants %s, not '%s'\n", opt, want, value);
}

static const char *hint(int err)
{
	if (err == -ENOENT || err == -ECONNREFUSED)
		return " (is ringtapd running?)";
	if (err == -EACCES)
		return " (ringtapd's socket is for root and its group)";
	return "";
}

static struct ringtap_client *connect_or_say(const struct ringtap_client_opts *opts,
					     bool resumable)
{
	struct ringtap_connect_error err;
	struct ringtap_client *c;
	int ret = resumable ? ringtap_connect_resumable(&c, opts, NULL, &err) :
			      ringtap_connect(&c, opts, &err);

	if (ret == 0)
		return c;
	fprintf(stderr, "ringtap: %s%s\n", err.text, err.refusal ? "" : hint(ret));
	return NULL;
}

/*
 * A comma list of numbers, with ranges "a-b" when ranges is set, into an
 * array the caller frees. -EINVAL for anything else.
 */
static int parse_numbers(const char *csv, bool ranges, long long min, long long max, void **out,
			 size_t *n_out)
{
	int32_t *v = NULL;
	size_t n = 0, alloc = 0;
	const char *p = csv;

	while (*p) {
		long long lo, hi;
		char *end;

		errno = 0;
		lo = hi = strtoll(p, &end, 10);
		if (ranges && end != p && *end == '-' && end[1] != '-' && end[1] != '+')
			hi = strtoll(end + 1, &end, 10);
		if (errno || end == p || (*end && *end != ',') || lo < min || hi > max || lo > hi ||
		    hi - lo > 65536)
			goto bad;
		for (long long x = lo; x <= hi; x++) {
			if (n == alloc) {
				int32_t *nv;

				alloc = alloc ? alloc * 2 : 8;
				nv = realloc(v, alloc * sizeof(*v));
				if (!nv)
					goto bad;
				v = nv;
			}
			v[n++] = (int32_t)(uint32_t)x;
		}
		p = *end ? end + 1 : end;
		if (*end && !*p)
			goto bad;
	}
	if (!n)
		goto bad;
	*out = v;
	*n_out = n;
	return 0;
bad:
	free(v);
	return -EINVAL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

enum { OPT_NO_TIME = 256, OPT_COMMON };

struct stream {
	struct ringtap_client *c;
	unsigned int flags;
	uint64_t count;		/* 0: no limit */
	uint64_t records, lost;
	char *line;
	size_t line_size;
	bool done;
	bool reconnect;		/* the connection ending is a gap, not the end */
	bool disconnected;
	uint64_t gaps;
	uint64_t resumes;	/* reconnections that went on from where the stream was */
	struct ringtap_resume *place;	/* --reconnect: where the stream is, to resume from */
	int exit_code;
};

static int print_event(struct stream *s, const struct ringtap_event *ev)
{
	int n = ringtap_format_event(s->c, ev, s->line, s->line_size, s->flags);

	if (n >= 0 && (size_t)n >= s->line_size) {
		char *bigger = realloc(s->line, (size_t)n + 1);

		if (!bigger)
			return -ENOMEM;
		s->line = bigger;
		s->line_size = (size_t)n + 1;
		n = ringtap_format_event(s->c, ev, s->line, s->line_size, s->flags);
	}
	if (n < 0)
		return n;
	fwrite(s->line, 1, (size_t)n, stdout);
	putchar('\n');
	return 0;
}

/* Takes every event already there; stops the stream on the end, an error or the count. */
static void drain(struct stream *s)
{
	struct ringtap_event ev;
	int ret;

	while (!s->done && !s->disconnected && (ret = ringtap_next(s->c, &ev, 0)) != 0) {
		if (ret == -EINTR)
			continue;
		if (ret < 0) {
			fprintf(stderr, "ringtap: %s\n", ringtap_error_text(s->c));
			if (s->reconnect) {
				s->disconnected = true;
				break;
			}
			s->exit_code = 1;
			s->done = true;
			break;
		}
		switch (ev.kind) {
		case RINGTAP_RECORD:
		case RINGTAP_LOST:
			if (print_event(s, &ev)) {
				fprintf(stderr, "ringtap: out of memory\n");
				s->exit_code = 1;
				s->done = true;
				break;
			}
			if (ev.kind == RINGTAP_LOST) {
				s->lost += ev.lost->count;
			} else if (++s->records == s->count) {
				s->done = true;
			}
			break;
		case RINGTAP_CPU_STATE:
			if (print_event(s, &ev)) {
				s->exit_code = 1;
				s->done = true;
			}
			break;
		case RINGTAP_HEARTBEAT:
		case RINGTAP_FIXED:	/* stream asks for DECODED: these never come */
		case RINGTAP_PAGE:
			break;
		case RINGTAP_ERROR_FRAME:
			fprintf(stderr, "ringtap: ringtapd gave up: %s (%s)\n", ev.error->text,
				strerror((int)ev.error->code));
			s->exit_code = 1;
			s->done = true;
			break;
		case RINGTAP_END:
			if (ev.end_clean) {
				fprintf(stderr, "ringtap: ringtapd ended the stream\n");
			} else {
				/* In the stream too: whoever reads it must know its end is unsure. */
				if (s->flags & RINGTAP_FORMAT_JSON)
					printf("{\"end\":\"cut\"}\n");
				else
					printf("# end: the connection was cut before ringtapd's last "
					       "report; losses at the end, if any, are not counted\n");
				fprintf(stderr, "ringtap: the connection to ringtapd was cut\n");
				if (!s->reconnect)
					s->exit_code = CLI_EXIT_CUT;
			}
			if (s->reconnect)
				s->disconnected = true;
			else
				s->done = true;
			break;
		}
	}
}

static int signal_fd(void)
{
	sigset_t mask;
	int fd;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -errno;
	fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

/*
 * The daemon went away (restarted or crashed, say): connect again with a
 * growing pause and resume from the last record printed: the daemon sends
 * what came meanwhile from its page ring, and a Lost line for what it no
 * longer held. Where it cannot (a daemon stopped and started since), the
 * stream itself says there is a gap. Returns false when a signal asked us
 * to stop meanwhile.
 */
static bool reconnect(struct stream *s, const struct ringtap_client_opts *opts, int sfd)
{
	const struct cli_reconnect how = { .wake_fd = sfd };
	struct ringtap_connect_error err;
	double since = cli_now_s();
	char refused[512] = "";
	bool resumed = false;
	int ret;

	/* An older daemon's stream is not resumable: a gap, as before. */
	if (s->place && ringtap_resume_save(s->c, s->place)) {
		ringtap_resume_free(s->place);
		s->place = NULL;
	}
	ringtap_close(s->c);
	s->c = NULL;
	s->disconnected = false;
	printf("# connection to ringtapd lost; reconnecting\n");
	fflush(stdout);
	ret = cli_reconnect(&s->c, opts, &how, s->place, &resumed, refused, sizeof(refused),
			    &err);
	if (ret == -ECANCELED)
		return false;
	if (ret) {
		fprintf(stderr, "ringtap: %s\n", err.text);
		s->exit_code = 1;
		return false;
	}
	ringtap_set_record_views(s->c, true);
	if (resumed) {
		s->resumes++;
		printf("# resumed after %.1f s where the stream was: nothing in between is "
		       "missing unless a lost line says so\n", cli_now_s() - since);
		fprintf(stderr, "ringtap: reconnected after %.1f s, resumed\n",
			cli_now_s() - since);
		return true;
	}
	s->gaps++;
	if (*refused)
		fprintf(stderr, "ringtap: %s\n", refused);
	printf("# gap: reconnected after %.1f s; events in between were not recorded\n",
	       cli_now_s() - since);
	fprintf(stderr, "ringtap: reconnected after %.1f s\n", cli_now_s() - since);
	return true;
}

/* What stream's command line asks, besides the subscription itself. */
struct stream_args {
	char *events;			/* every -e's list, joined */
	const char **list, **fields;
	void *cpus, *pids;
	double duration;
};

static void stream_args_free(struct stream_args *a)
{
	free(a->list);
	free((void *)a->fields);
	free(a->events);
	free(a->cpus);
	free(a->pids);
}

/* One option into opts, s or a; false after saying what is wrong. */
static bool take_stream_option(int c, char **argv, struct ringtap_client_opts *opts,
			       struct stream *s, struct stream_args *a)
{
	char *end;

	switch (c) {
	case 's':
		opts->socket_path = optarg;
		return true;
	case 'e':
		if (cli_list_add(&a->events, optarg)) {
			fprintf(stderr, "ringtap: out of memory\n");
			return false;
		}
		return true;
	case 'c':
		free(a->cpus);
		a->cpus = NULL;
		if (parse_numbers(optarg, true, 0, UINT32_MAX, &a->cpus, &opts->n_cpus)) {
			bad_value("--cpus", "CPU numbers like 0,2-3", optarg);
			return false;
		}
		opts->cpus = a->cpus;
		return true;
	case 'f':
		opts->filter = optarg;
		return true;
	case 'F':
		free((void *)a->fields);
		a->fields = cli_list_split(optarg);
		if (!a->fields) {
			fprintf(stderr, "ringtap: out of memory\n");
			return false;
		}
		opts->fields = a->fields;
		return true;
	case 'p':
		free(a->pids);
		a->pids = NULL;
		if (parse_numbers(optarg, false, 0, INT32_MAX, &a->pids, &opts->n_pids)) {
			bad_value("--pids", "process ids like 1,4242", optarg);
			return false;
		}
		opts->pids = a->pids;
		return true;
	case 'j':
		s->flags |= RINGTAP_FORMAT_JSON;
		return true;
	case 'n':
		errno = 0;
		s->count = strtoull(optarg, &end, 10);
		if (errno || *end || !*optarg || s->count == 0 || optarg[0] == '-') {
			bad_value("--count", "a positive number", optarg);
			return false;
		}
		return true;
	case 'd':
		a->duration = strtod(optarg, &end);
		if (*end || !*optarg || !isfinite(a->duration) || a->duration <= 0 ||
		    a->duration > 1e9) {
			bad_value("--duration", "seconds", optarg);
			return false;
		}
		return true;
	case OPT_NO_TIME:
		s->flags |= RINGTAP_FORMAT_NO_TIME;
		return true;
	case 'r':
		s->reconnect = true;
		return true;
	case OPT_COMMON:
		opts->common_fields = true;
		return true;
	case CLI_OPT_MAX_LATENCY:
		if (!cli_latency(optarg, &opts->max_latency_ms)) {
			bad_value("--max-latency", "milliseconds", optarg);
			return false;
		}
		return true;
	case CLI_OPT_TRANSPORT:
		if (!cli_transport(optarg, &opts->transport)) {
			bad_value("--transport", "auto, ring or socket", optarg);
			return false;
		}
		return true;
	}
	if (cli_tls_option(c, optarg, opts))
		return true;
	cli_bad_option("stream", argv, c);
	return false;
}

/* The command line into opts, s and a: 0, 1 after --help, -1 after saying what is wrong. */
static int parse_stream_args(int argc, char **argv, struct ringtap_client_opts *opts,
			     struct stream *s, struct stream_args *a)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		CLI_TLS_LONGOPTS,
		{ "events", required_argument, NULL, 'e' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "pids", required_argument, NULL, 'p' },
		{ "filter", required_argument, NULL, 'f' },
		{ "fields", required_argument, NULL, 'F' },
		{ "json", no_argument, NULL, 'j' },
		{ "count", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'd' },
		{ "no-time", no_argument, NULL, OPT_NO_TIME },
		{ "common", no_argument, NULL, OPT_COMMON },
		{ "max-latency", required_argument, NULL, CLI_OPT_MAX_LATENCY },
		{ "transport", required_argument, NULL, CLI_OPT_TRANSPORT },
		{ "reconnect", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	while ((c = getopt_long(argc, argv, ":s:e:c:p:f:F:jn:d:rh", longopts, NULL)) != -1) {
		if (c == 'h') {
			usage_stream(stdout);
			return 1;
		}
		if (!take_stream_option(c, argv, opts, s, a))
			return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "ringtap stream: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (!a->events)
		a->events = strdup(CLI_DEFAULT_EVENTS);
	a->list = a->events ? cli_list_split(a->events) : NULL;
	if (!a->list) {
		fprintf(stderr, "ringtap: out of memory\n");
		return -1;
	}
	if (!a->list[0]) {
		fprintf(stderr, "ringtap stream: --events wants at least one event\n");
		return -1;
	}
	opts->events = a->list;
	return 0;
}

/* Lines until the end, a signal on sfd, --count or the deadline (0: none). */
static void stream_until_end(struct stream *s, const struct ringtap_client_opts *opts, int sfd,
			     uint64_t deadline)
{
	while (!s->done) {
		struct pollfd pfd[2] = {
			{ .fd = ringtap_fd(s->c), .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
		};
		int timeout = -1;

		drain(s);
		if (s->disconnected && !reconnect(s, opts, sfd))
			break;
		if (s->done)
			break;
		/* Whoever reads the lines as they come sees them before we wait. */
		fflush(stdout);
		if (deadline) {
			uint64_t now = now_ns();

			if (now >= deadline)
				break;
			timeout = (int)((deadline - now + 999999) / 1000000);
		}
		if (poll(pfd, 2, timeout) < 0 && errno != EINTR) {
			fprintf(stderr, "ringtap: poll: %s\n", strerror(errno));
			s->exit_code = 1;
			break;
		}
		if (pfd[1].revents)
			break;
	}
}

static int cmd_stream(int argc, char **argv)
{
	struct ringtap_client_opts opts = { .client_name = CLIENT_NAME,
					    .transport = RINGTAP_TRANSPORT_RING_OR_SOCKET };
	struct stream s = { .exit_code = 0 };
	struct stream_args a = { 0 };
	uint64_t deadline = 0;
	int ret, sfd = -1;

	ret = parse_stream_args(argc, argv, &opts, &s, &a);
	if (ret)
		goto fail;
	/*
	 * Taken before connecting: once ringtapd has us subscribed, a SIGINT must
	 * end the stream with its summary. A background job starts with SIGINT
	 * ignored, and a signal that comes while it is still ignored is gone; a
	 * blocked one waits. Ctrl-C during the connect then waits for it (at most
	 * its timeout) and ends the stream at once.
	 */
	sfd = signal_fd();
	if (sfd < 0) {
		fprintf(stderr, "ringtap: signalfd: %s\n", strerror(-sfd));
		goto fail;
	}
	/*
	 * --reconnect: numbered records, to resume where the stream was cut
	 * (a ring reader from its place in the ring).
	 */
	if (s.reconnect && !(s.place = ringtap_resume_new())) {
		fprintf(stderr, "ringtap: out of memory\n");
		goto fail;
	}
	s.c = connect_or_say(&opts, s.place != NULL);
	if (!s.c)
		goto fail;
	/* Lines are built from records read in place: no message unpacked per record. */
	ringtap_set_record_views(s.c, true);
	if (a.duration > 0)
		deadline = now_ns() + (uint64_t)(a.duration * 1e9);
	stream_until_end(&s, &opts, sfd, deadline);
	ringtap_close(s.c);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "ringtap: writing to standard output: %s\n", strerror(errno));
		s.exit_code = 1;
	}
	fprintf(stderr, "ringtap: %" PRIu64 " records, %" PRIu64 " lost", s.records, s.lost);
	if (s.reconnect)
		fprintf(stderr, ", %" PRIu64 " gap(s), %" PRIu64 " resumed", s.gaps, s.resumes);
	fputc('\n', stderr);
	ringtap_resume_free(s.place);
	free(s.line);
	stream_args_free(&a);
	close(sfd);
	return s.exit_code;
fail:
	if (sfd >= 0)
		close(sfd);
	ringtap_resume_free(s.place);
	stream_args_free(&a);
	return ret > 0 ? 0 : 1;
}

static void print_field(const Ringtap__Field *f)
{
	printf("  %-24s offset %3" PRIu32 "  size %4" PRIu32 "  %s%s%s\n", f->name, f->offset,
	       f->size, f->has_is_signed ? (f->is_signed ? "signed" : "unsigned") : "",
	       f->type && *f->type ? "  " : "", f->type ? f->type : "");
}

static void print_indented(const char *text)
{
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		printf("  %.*s\n", (int)len, p);
		p += len + (nl ? 1 : 0);
	}
}

static int cmd_info(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		CLI_TLS_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct ringtap_client_opts opts = { .client_name = CLIENT_NAME };
	const Ringtap__Welcome *w;
	const Ringtap__Layout *l;
	struct ringtap_client *c;
	const ProtobufCEnumValue *enc;
	int opt;

	while ((opt = getopt_long(argc, argv, ":s:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			opts.socket_path = optarg;
			break;
		case 'h':
			usage_info(stdout);
			return 0;
		default:
			if (cli_tls_option(opt, optarg, &opts))
				break;
			cli_bad_option("info", argv, opt);
			return 1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ringtap info: unexpected argument '%s'\n", argv[optind]);
		return 1;
	}
	c = connect_or_say(&opts, false);
	if (!c)
		return 1;
	w = ringtap_welcome(c);
	l = w->layout;
	enc = protobuf_c_enum_descriptor_get_value(&ringtap__encoding__descriptor, w->encoding);
	printf("host:           %s\n", w->hostname);
	printf("kernel:         %s\n", w->kernel_release);
	printf("boot id:        %s\n", w->boot_id);
	printf("protocol:       version %" PRIu32 ", encoding %s\n", w->version,
	       enc ? enc->name : "unknown");
	printf("trace clock:    %s\n", w->trace_clock);
	printf("CPUs:           %" PRIu32 "\n", w->cpus);
	printf("sub-buffer:     %" PRIu32 " bytes\n", l->sub_buffer_size);
	printf("long size:      %" PRIu32 " bytes\n", l->long_size);
	printf("endianness:     %s\n", l->big_endian ? "big" : "little");
	printf("page fields:\n");
	for (size_t i = 0; i < l->n_page_fields; i++)
		print_field(l->page_fields[i]);
	printf("common fields:\n");
	for (size_t i = 0; i < l->n_common_fields; i++)
		print_field(l->common_fields[i]);
	printf("header_page:\n");
	print_indented(l->header_page);
	ringtap_close(c);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "ringtap: writing to standard output: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

/* collect reads a NATS stream with --nats (collect-nats.c). */
static bool wants_nats(int argc, char **argv)
{
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], "--nats") || !strncmp(argv[i], "--nats=", 7))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	const char *cmd;

	opterr = 0;
	if (argc < 2) {
		usage(stderr);
		return 1;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		printf("ringtap %s\n", RINGTAP_VERSION);
		return 0;
	}
	/* The command's options start after its name. */
	if (!strcmp(cmd, "stream"))
		return cmd_stream(argc - 1, argv + 1);
	if (!strcmp(cmd, "info"))
		return cmd_info(argc - 1, argv + 1);
	if (!strcmp(cmd, "status"))
		return rt_status_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "record"))
		return cmd_record(argc - 1, argv + 1);
	if (!strcmp(cmd, "collect") && wants_nats(argc, argv))
		return rt_collect_nats_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "collect"))
		return cmd_collect(argc - 1, argv + 1);
	fprintf(stderr, "ringtap: unknown command '%s' (see ringtap --help)\n", cmd);
	return 1;
}
