// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ringtap record -o FILE: asks ringtapd for the RAW encoding and writes
 * every frame it sends, as it came (delimited protobuf: the Welcome with the
 * header_page and header_event texts, a Schema with the format text of each
 * event, then Pages of sub-buffers as the kernel wrote them, and Lost
 * reports). Any protobuf library reads the file back; the pages parse with
 * libtraceevent. A full disk stops the recording with a clear error and the
 * file holds whole frames up to there.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "record.h"
#include "ringtap.h"

struct recording {
	FILE *out;
	const char *path;
	int write_error;
	uint64_t frames, bytes, pages, lost;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static void tap(void *ctx, const uint8_t *frame, size_t len)
{
	struct recording *r = ctx;

	if (r->write_error)
		return;
	if (fwrite(frame, 1, len, r->out) != len || fflush(r->out)) {
		r->write_error = errno ? errno : EIO;
		return;
	}
	r->frames++;
	r->bytes += len;
}

static void usage(FILE *f)
{
	fputs("Usage: ringtap record -o FILE [OPTIONS]\n"
	      "Records the daemon's raw stream (RAW encoding: format texts, sub-buffers as the\n"
	      "kernel wrote them, loss reports) into FILE as delimited protobuf frames.\n"
	      "Shows progress on standard error; stops on Ctrl-C, SIGTERM or --duration.\n\n"
	      "  -o, --output=FILE      the capture file (required)\n"
	      "  -s, --socket=PATH      ringtapd's socket (default " RINGTAP_DEFAULT_SOCKET ")\n"
	      "  -e, --events=LIST      comma-separated system:event globs (default ringtap_test:*)\n"
	      "  -d, --duration=SEC     stop after SEC seconds\n"
	      "  -h, --help             this text\n",
	      f);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void progress(const struct recording *r, bool last)
{
	bool tty = isatty(STDERR_FILENO);

	fprintf(stderr, "%sringtap record: %" PRIu64 " pages, %" PRIu64 " bytes, %" PRIu64
		" lost%s", tty ? "\r" : "", r->pages, r->bytes, r->lost, tty && !last ? "" : "\n");
}

int cmd_record(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "socket", required_argument, NULL, 's' },
		{ "events", required_argument, NULL, 'e' },
		{ "duration", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct ringtap_client_opts opts = { .client_name = "ringtap record" };
	struct recording r = { 0 };
	struct ringtap_connect_error err;
	struct ringtap_client *c;
	const char *events[33] = { "ringtap_test:*" };
	double duration = 0, start, next_progress;
	char *save = NULL;
	int opt, ret = 0;

	while ((opt = getopt_long(argc, argv, ":o:s:e:d:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			r.path = optarg;
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
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (!r.path) {
		fprintf(stderr, "ringtap record: -o FILE is required\n");
		return 1;
	}
	r.out = fopen(r.path, "wbe");
	if (!r.out) {
		fprintf(stderr, "ringtap record: %s: %s\n", r.path, strerror(errno));
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	opts.events = events;
	opts.encoding = RINGTAP__ENCODING__RAW;
	opts.tap = tap;
	opts.tap_ctx = &r;
	if (ringtap_connect(&c, &opts, &err)) {
		fprintf(stderr, "ringtap record: %s\n", err.text);
		fclose(r.out);
		return 1;
	}
	start = now_s();
	next_progress = start + 1;
	while (!stop && !r.write_error && (!duration || now_s() - start < duration)) {
		struct ringtap_event ev;
		int n = ringtap_next(c, &ev, 200);

		if (n == -EINTR || n == 0)
			goto tick;
		if (n < 0) {
			fprintf(stderr, "\nringtap record: %s\n", ringtap_error_text(c));
			ret = 1;
			break;
		}
		if (ev.kind == RINGTAP_END)
			break;
		if (ev.kind == RINGTAP_PAGE)
			r.pages++;
		if (ev.kind == RINGTAP_LOST)
			r.lost += ev.lost->count;
tick:
		if (now_s() >= next_progress) {
			progress(&r, false);
			next_progress += 1;
		}
	}
	progress(&r, true);
	if (r.write_error) {
		fprintf(stderr, "ringtap record: writing %s: %s; the file holds the %" PRIu64
			" whole frames written before\n", r.path, strerror(r.write_error), r.frames);
		ret = 1;
	}
	ringtap_close(c);
	if (fclose(r.out) && !ret) {
		fprintf(stderr, "ringtap record: closing %s: %s\n", r.path, strerror(errno));
		ret = 1;
	}
	return ret;
}
