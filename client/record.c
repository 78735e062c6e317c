// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ringtap record -o FILE: asks ringtapd for the RAW encoding and writes what
 * it sends in one of two forms.
 *
 * trace.dat (FILE ending in .dat, or --format=trace.dat): trace-cmd's file,
 * version 6 (tracedat.c), for trace-cmd report and KernelShark: the
 * Welcome's header texts and clock, each Schema's format text, the pages by
 * CPU, and the daemon's loss reports as each CPU's stats.
 *
 * protobuf (otherwise): every frame as it came, delimited: the Welcome with
 * the header_page and header_event texts, a Schema with the format text of
 * each event, then Pages of sub-buffers as the kernel wrote them, and Lost
 * reports. Any protobuf library reads the file back; the pages parse with
 * libtraceevent.
 *
 * A full disk stops the recording with a clear error; the file keeps what
 * was whole before (frames, or pages in a trace.dat trace-cmd reads).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "record.h"
#include "cli-tls.h"
#include "ringtap.h"
#include "tracedat.h"

/* The protobuf capture's stdio buffer: written out when full, on a pause, once a second. */
#define RECORD_BUFFER	(256u << 10)

enum record_format {
	FORMAT_AUTO,		/* by the file name */
	FORMAT_PROTOBUF,
	FORMAT_TRACEDAT,
};

/* What the daemon reported lost on one CPU, by where it was lost. */
struct cpu_losses {
	uint64_t kernel, queue, malformed;
	uint64_t uncounted;	/* reports whose count nobody kept */
};

struct recording {
	const char *path;
	bool tracedat;
	FILE *out;			/* protobuf */
	int fd;				/* trace.dat */
	struct tracedat *td;
	unsigned int page_size;		/* the Welcome's sub-buffer size */
	int write_error;		/* an errno value */
	unsigned int bad_formats;	/* Schemas the trace.dat could not take */
	uint64_t frames, bytes, pages, lost;	/* frames, bytes: on disk (protobuf) */
	uint64_t unflushed_frames, unflushed_bytes;
	uint64_t events;		/* in the pages, as the daemon counted them */
	FILE *clock;			/* --clock-file: the host's clock pairs */
	uint64_t gaps;			/* reconnections: what happened meanwhile is not here */
	unsigned int host_texts;	/* HostTexts frames taken */
	struct cpu_losses *cpu;		/* Welcome.cpus of them */
	unsigned int cpus;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

/* A base-128 varint at *pos; false when it runs past len or 64 bits. */
static bool read_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *v)
{
	*v = 0;
	for (unsigned int shift = 0; *pos < len && shift < 64; shift += 7) {
		uint8_t b = p[(*pos)++];

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/*
 * trace.dat: the format text of each Schema and the HostTexts. They reach a
 * client only through the tap; the frame's first key says which message it
 * holds, so only those are unpacked a second time (pages come from
 * ringtap_next()).
 */
static void tap_texts(struct recording *r, const uint8_t *frame, size_t len)
{
	Ringtap__Frame *f;
	size_t pos = 0, body;
	uint64_t n, key;

	if (!read_varint(frame, len, &pos, &n) || n != len - pos)
		return;
	body = pos;
	if (!read_varint(frame, len, &pos, &key) || (key >> 3 != RINGTAP__FRAME__MSG_SCHEMA &&
						     key >> 3 != RINGTAP__FRAME__MSG_HOST_TEXTS))
		return;
	f = ringtap__frame__unpack(NULL, len - body, frame + body);
	if (!f || !r->td)
		goto out;
	if (f->msg_case == RINGTAP__FRAME__MSG_SCHEMA) {
		const Ringtap__Schema *s = f->schema;

		if (!s->format || !*s->format ||
		    tracedat_add_format(r->td, s->system, s->format, strlen(s->format)))
			r->bad_formats++;
	} else if (f->msg_case == RINGTAP__FRAME__MSG_HOST_TEXTS) {
		const Ringtap__HostTexts *h = f->host_texts;

		r->host_texts++;
		/* What is missing stays empty: addresses and "<...>" in the report. */
		if (h->has_kallsyms)
			tracedat_set_kallsyms(r->td, (const char *)h->kallsyms.data, h->kallsyms.len);
		if (h->has_printk_formats)
			tracedat_set_printk_formats(r->td, (const char *)h->printk_formats.data,
						    h->printk_formats.len);
		if (h->has_saved_cmdlines)
			tracedat_set_cmdlines(r->td, (const char *)h->saved_cmdlines.data,
					      h->saved_cmdlines.len);
	}
out:
	if (f)
		ringtap__frame__free_unpacked(f, NULL);
}

static void tap(void *ctx, const uint8_t *frame, size_t len)
{
	struct recording *r = ctx;

	if (r->tracedat) {
		tap_texts(r, frame, len);
		return;
	}
	if (r->write_error)
		return;
	if (fwrite(frame, 1, len, r->out) != len) {
		r->write_error = errno ? errno : EIO;
		return;
	}
	r->unflushed_frames++;
	r->unflushed_bytes += len;
}

/*
 * Frames reach the file a buffer at a time, not a write per page: when the
 * stream pauses (a wait for the next frame timed out) and once a second, so
 * at most a second of the stream is held here. Counts what is on disk.
 */
static void flush_frames(struct recording *r)
{
	if (r->tracedat || r->write_error || !r->unflushed_frames)
		return;
	if (fflush(r->out)) {
		r->write_error = errno ? errno : EIO;
		return;
	}
	r->frames += r->unflushed_frames;
	r->bytes += r->unflushed_bytes;
	r->unflushed_frames = r->unflushed_bytes = 0;
}

static void usage(FILE *f)
{
	fputs("Usage: ringtap record -o FILE [OPTIONS]\n"
	      "Records the daemon's raw stream (RAW encoding: format texts, sub-buffers as the\n"
	      "kernel wrote them, loss reports) into FILE: a trace-cmd trace.dat (version 6,\n"
	      "for trace-cmd report and KernelShark) when FILE ends in .dat, otherwise\n"
	      "delimited protobuf frames as the daemon sent them.\n"
	      "Shows progress on standard error; stops on Ctrl-C, SIGTERM, SIGHUP or\n"
	      "--duration.\n\n"
	      "  -o, --output=FILE      the capture file (required)\n"
	      "      --format=FORMAT    trace.dat or protobuf, whatever FILE is called\n"
	      "  -s, --socket=ADDRESS   ringtapd's socket (default " RINGTAP_DEFAULT_SOCKET "),\n"
	      "                         or its TCP listener: tls://HOST:PORT, tcp://HOST:PORT\n"
	      CLI_TLS_HELP
	      "  -e, --events=LIST      comma-separated system:event globs (default ringtap_test:*)\n"
	      "  -d, --duration=SEC     stop after SEC seconds\n"
	      "      --clock-file=FILE  append the host's boot and (trace clock, realtime)\n"
	      "                         pairs, one per Heartbeat, to align hosts later\n"
	      "  -r, --reconnect        when ringtapd restarts, connect again and go on (the\n"
	      "                         gap is counted in each CPU's stats)\n"
	      "  -h, --help             this text\n",
	      f);
}

/* Read per page: the coarse clock costs no clock-source read (see libringtap's now_ns). */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t cpu_lost(const struct cpu_losses *l)
{
	return l->kernel + l->queue + l->malformed;
}

/* "N pages, B bytes, L lost (cpuC L, ...)": the first few CPUs that lost any. */
static void progress(const struct recording *r, bool last)
{
	bool tty = isatty(STDERR_FILENO);
	char per_cpu[128] = "";
	size_t n = 0;
	unsigned int shown = 0;

	for (unsigned int i = 0; i < r->cpus && n < sizeof(per_cpu); i++) {
		uint64_t lost = cpu_lost(&r->cpu[i]);

		if (!lost)
			continue;
		if (shown++ == 4) {
			n += (size_t)snprintf(per_cpu + n, sizeof(per_cpu) - n, ", ...");
			break;
		}
		n += (size_t)snprintf(per_cpu + n, sizeof(per_cpu) - n, "%scpu%u %" PRIu64,
				      shown > 1 ? ", " : " (", i, lost);
	}
	if (shown && n < sizeof(per_cpu))
		snprintf(per_cpu + n, sizeof(per_cpu) - n, ")");
	fprintf(stderr, "%sringtap record: %" PRIu64 " events, %" PRIu64 " pages, %" PRIu64
		" bytes, %" PRIu64 " lost%s%s", tty ? "\r" : "", r->events, r->pages, r->bytes,
		r->lost, per_cpu, tty && !last ? "" : "\n");
}

/*
 * The clock file aligns this host's trace with others after the fact: per
 * connection a line naming the boot and trace clock, then a line per
 * Heartbeat with the trace clock and realtime read at one instant.
 */
static void clock_boot(struct recording *r, const Ringtap__Welcome *w)
{
	if (r->clock)
		fprintf(r->clock, "boot %s host %s clock %s\n", w->boot_id, w->hostname,
			w->trace_clock);
}

static void clock_pair(struct recording *r, const Ringtap__Heartbeat *h)
{
	if (!r->clock)
		return;
	fprintf(r->clock, "pair %" PRIu64 " %" PRIu64 "\n", h->trace_clock_ns, h->realtime_ns);
	fflush(r->clock);
}

static void count_loss(struct recording *r, unsigned int cpu, const Ringtap__Lost *l)
{
	struct cpu_losses *c = &r->cpu[cpu];

	r->lost += l->count;
	if (l->source == RINGTAP__LOSS_SOURCE__QUEUE)
		c->queue += l->count;
	else if (l->source == RINGTAP__LOSS_SOURCE__MALFORMED)
		c->malformed += l->count;
	else
		c->kernel += l->count;
	if (l->has_count_exact && !l->count_exact)
		c->uncounted++;
}

/* The Welcome describes the file: byte order, long and sub-buffer size, CPUs, clock. */
static int start_tracedat(struct recording *r, const Ringtap__Welcome *w)
{
	const Ringtap__Layout *l = w->layout;
	struct tracedat_params p = {
		.big_endian = l->big_endian,
		.long_size = l->long_size,
		.page_size = l->sub_buffer_size,
		.cpus = w->cpus,
	};
	char *dir = strdup(r->path), *slash;
	int ret;

	if (!dir) {
		fprintf(stderr, "ringtap record: %s\n", strerror(ENOMEM));
		return -ENOMEM;
	}
	/* Spools next to the output: the same disk, the room it will need. */
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else
		slash[slash == dir] = '\0';
	p.spool_dir = dir;
	r->page_size = p.page_size;
	ret = tracedat_open(&r->td, r->fd, &p);
	if (ret) {
		fprintf(stderr, "ringtap record: %s: a trace.dat for %u CPUs, %u-byte longs and "
			"%u-byte sub-buffers in %s: %s\n", r->path, p.cpus, p.long_size,
			p.page_size, dir, strerror(-ret));
		goto out;
	}
	ret = tracedat_set_headers(r->td, l->header_page, strlen(l->header_page),
				   l->header_event, strlen(l->header_event));
	if (ret) {
		fprintf(stderr, "ringtap record: the daemon's header texts: %s\n", strerror(-ret));
		goto out;
	}
	/* Without it trace-cmd takes a ns clock; a name it cannot hold changes nothing else. */
	tracedat_set_clock(r->td, w->trace_clock);
out:
	free(dir);
	return ret;
}

/* The losses as each CPU's stats, then the pages into place. Returns the exit status. */
static int finish_tracedat(struct recording *r)
{
	struct tracedat_result res;
	int ret;

	for (unsigned int i = 0; i < r->cpus; i++) {
		const struct cpu_losses *l = &r->cpu[i];
		char stats[256];

		/* "overrun" as the kernel counts it: overwritten before it was read. */
		snprintf(stats, sizeof(stats),
			 "overrun: %" PRIu64 "\n"
			 "ringtap queue lost: %" PRIu64 "\n"
			 "ringtap malformed lost: %" PRIu64 "\n"
			 "ringtap losses not counted: %" PRIu64 "\n"
			 "ringtap reconnections: %" PRIu64 "\n",
			 l->kernel, l->queue, l->malformed, l->uncounted, r->gaps);
		tracedat_set_cpu_stats(r->td, i, stats);
	}
	if (r->bad_formats)
		fprintf(stderr, "ringtap record: %u event formats missing from %s: trace-cmd will "
			"not name those events\n", r->bad_formats, r->path);
	ret = tracedat_finish(r->td, &res);
	if (!ret)
		return 0;
	if (!res.readable)
		fprintf(stderr, "ringtap record: writing %s: %s; it is no usable trace.dat\n",
			r->path, strerror(-ret));
	else
		fprintf(stderr, "ringtap record: writing %s: %s; trace-cmd reads the %" PRIu64
			" pages it holds, %" PRIu64 " more did not fit\n", r->path, strerror(-ret),
			res.pages, res.pages_dropped);
	return 1;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

/* One page into the trace.dat; false (and why, on stderr) when the recording must stop. */
static bool add_page(struct recording *r, const struct ringtap_event *ev)
{
	int ret = tracedat_add_page(r->td, ev->cpu, ev->page->data, ev->page->len);

	if (ret == -EINVAL) {
		fprintf(stderr, "\nringtap record: a page of %zu bytes for cpu %u, where the "
			"Welcome's layout says %u\n", ev->page->len, ev->cpu, r->page_size);
		return false;
	}
	if (ret) {
		r->write_error = -ret;
		return false;
	}
	r->bytes += ev->page->len;
	return true;
}

/*
 * The daemon went away (a restart): connect again with a growing pause, as
 * long as the same kernel answers (the file's layout stays true), and mark
 * the gap on every CPU: what happened meanwhile is not in the file.
 */
static struct ringtap_client *connect_again(struct recording *r,
					    const struct ringtap_client_opts *opts,
					    const Ringtap__Welcome *was, double deadline)
{
	unsigned int pause_ms = 100;
	double since = now_s();

	fprintf(stderr, "\nringtap record: ringtapd went away; reconnecting\n");
	while (!stop && (!deadline || now_s() < deadline)) {
		struct ringtap_connect_error err;
		struct ringtap_client *c;
		const Ringtap__Welcome *w;
		struct timespec ts = { pause_ms / 1000, (long)(pause_ms % 1000) * 1000000 };

		nanosleep(&ts, NULL);
		if (pause_ms < 2000)
			pause_ms *= 2;
		if (ringtap_connect(&c, opts, &err)) {
			if (err.refusal) {
				fprintf(stderr, "ringtap record: %s\n", err.text);
				return NULL;
			}
			continue;
		}
		w = ringtap_welcome(c);
		if (strcmp(w->boot_id, was->boot_id) ||
		    strcmp(w->layout->header_page, was->layout->header_page) || w->cpus != r->cpus) {
			fprintf(stderr, "ringtap record: another boot or layout answered; the "
				"recording ends here\n");
			ringtap_close(c);
			return NULL;
		}
		r->gaps++;
		for (unsigned int cpu = 0; cpu < r->cpus; cpu++)
			r->cpu[cpu].uncounted++;
		fprintf(stderr, "ringtap record: reconnected after %.1f s; events in between are "
			"not recorded\n", now_s() - since);
		return c;
	}
	return NULL;
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
	double until = now_s() + 2;

	if (ringtap_update(c, opts))
		return;
	while (r->host_texts == had && now_s() < until) {
		struct ringtap_event ev;
		int n = ringtap_next(c, &ev, 100);

		if (n < 0 || (n > 0 && ev.kind == RINGTAP_END))
			return;
		if (n > 0 && ev.kind == RINGTAP_PAGE) {
			if (!add_page(r, &ev))
				return;
			r->pages++;
		}
		if (n > 0 && ev.kind == RINGTAP_LOST)
			count_loss(r, ev.cpu, ev.lost);
	}
}

int cmd_record(int argc, char **argv)
{
	enum { OPT_FORMAT = 0x100, OPT_CLOCK_FILE };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "clock-file", required_argument, NULL, OPT_CLOCK_FILE },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "socket", required_argument, NULL, 's' },
		CLI_TLS_LONGOPTS,
		{ "events", required_argument, NULL, 'e' },
		{ "duration", required_argument, NULL, 'd' },
		{ "reconnect", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct ringtap_client_opts opts = { .client_name = "ringtap record" };
	bool reconnect = false;
	struct recording r = { .fd = -1 };
	struct ringtap_connect_error err;
	struct ringtap_client *c, *next;
	const Ringtap__Welcome *welcome;
	const char *events[33] = { "ringtap_test:*" };
	enum record_format format = FORMAT_AUTO;
	double duration = 0, start, next_progress;
	char *save = NULL;
	int opt, ret = 0;

	while ((opt = getopt_long(argc, argv, ":o:s:e:d:rh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			r.path = optarg;
			break;
		case OPT_CLOCK_FILE:
			if (r.clock)
				fclose(r.clock);
			r.clock = fopen(optarg, "ae");
			if (!r.clock) {
				fprintf(stderr, "ringtap record: %s: %s\n", optarg, strerror(errno));
				return 1;
			}
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "trace.dat")) {
				format = FORMAT_TRACEDAT;
			} else if (!strcmp(optarg, "protobuf")) {
				format = FORMAT_PROTOBUF;
			} else {
				fprintf(stderr, "ringtap record: --format wants trace.dat or "
					"protobuf, not '%s'\n", optarg);
				return 1;
			}
			break;
		case 's':
			opts.socket_path = optarg;
			break;
		case 'e': {
			size_t n = 0;

			for (char *t = strtok_r(optarg, ",", &save); t && n < 32;
			     t = strtok_r(NULL, ",", &save))
				events[n++] = t;
			events[n] = NULL;
			break;
		}
		case 'd':
			duration = strtod(optarg, NULL);
			break;
		case 'r':
			reconnect = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			if (cli_tls_option(opt, optarg, &opts))
				break;
			usage(stderr);
			return 1;
		}
	}
	if (!r.path) {
		fprintf(stderr, "ringtap record: -o FILE is required\n");
		return 1;
	}
	r.tracedat = format == FORMAT_TRACEDAT ||
		     (format == FORMAT_AUTO && ends_with(r.path, ".dat"));
	if (r.tracedat)
		r.fd = open(r.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	else if ((r.out = fopen(r.path, "wbe")))
		setvbuf(r.out, NULL, _IOFBF, RECORD_BUFFER);
	if (r.tracedat ? r.fd < 0 : !r.out) {
		fprintf(stderr, "ringtap record: %s: %s\n", r.path, strerror(errno));
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* A closed terminal too: what the capture's buffer holds is written out. */
	signal(SIGHUP, on_signal);
	/* A file size limit then stops the recording like a full disk, with the file kept. */
	signal(SIGXFSZ, SIG_IGN);
	opts.events = events;
	opts.encoding = RINGTAP__ENCODING__RAW;
	opts.tap = tap;
	opts.tap_ctx = &r;
	opts.host_texts = r.tracedat;
	if (ringtap_connect(&c, &opts, &err)) {
		fprintf(stderr, "ringtap record: %s\n", err.text);
		ret = 1;
		goto out;
	}
	welcome = ringtap_welcome(c);
	clock_boot(&r, welcome);
	r.cpus = welcome->cpus;
	r.cpu = calloc(r.cpus ? r.cpus : 1, sizeof(*r.cpu));
	if (!r.cpu || (r.tracedat && start_tracedat(&r, welcome))) {
		if (!r.cpu)
			fprintf(stderr, "ringtap record: %s\n", strerror(ENOMEM));
		ringtap_close(c);
		ret = 1;
		goto out;
	}
	start = now_s();
	next_progress = start + 1;
	while (!stop && !r.write_error && (!duration || now_s() - start < duration)) {
		struct ringtap_event ev;
		int n = ringtap_next(c, &ev, 200);

		if (n == 0)
			flush_frames(&r);
		if (n == -EINTR || n == 0)
			goto tick;
		if (n < 0 || ev.kind == RINGTAP_END) {
			if (n < 0)
				fprintf(stderr, "\nringtap record: %s\n", ringtap_error_text(c));
			if (!reconnect) {
				ret = n < 0;
				break;
			}
			flush_frames(&r);
			/* The old Welcome is what the new one must match: closed after. */
			next = connect_again(&r, &opts, welcome, duration ? start + duration : 0);
			ringtap_close(c);
			c = next;
			if (!c)
				break;
			welcome = ringtap_welcome(c);
			clock_boot(&r, welcome);
			goto tick;
		}
		if (ev.kind == RINGTAP_PAGE) {
			if (r.tracedat && !add_page(&r, &ev)) {
				ret = 1;
				break;
			}
			r.pages++;
			r.events += ev.page_records;
		}
		if (ev.kind == RINGTAP_HEARTBEAT)
			clock_pair(&r, ev.heartbeat);
		if (ev.kind == RINGTAP_LOST)
			count_loss(&r, ev.cpu, ev.lost);
tick:
		if (now_s() >= next_progress) {
			flush_frames(&r);
			progress(&r, false);
			next_progress += 1;
		}
	}
	flush_frames(&r);
	if (r.tracedat && c && !ret && !r.write_error)
		refresh_host_texts(&r, c, &opts);
	/* The daemon is let go first: putting a big trace.dat together takes a while. */
	ringtap_close(c);
	progress(&r, true);
	if (r.tracedat) {
		/* A write error sticks in the writer: finish says it, with what the file holds. */
		ret |= finish_tracedat(&r);
	} else if (r.write_error) {
		fprintf(stderr, "ringtap record: writing %s: %s; the file holds at least the %"
			PRIu64 " whole frames written before\n", r.path, strerror(r.write_error),
			r.frames);
		ret = 1;
	}
out:
	if (r.clock)
		fclose(r.clock);
	tracedat_free(r.td);
	free(r.cpu);
	if (r.tracedat ? close(r.fd) : fclose(r.out)) {
		if (!ret)
			fprintf(stderr, "ringtap record: closing %s: %s\n", r.path,
				strerror(errno));
		ret = 1;
	}
	return ret;
}
