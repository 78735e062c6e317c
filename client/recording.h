/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * recording: what `ringtap record` does with the daemon's RAW stream, in one
 * of two forms.
 *
 * trace.dat: trace-cmd's file, version 6 (tracedat.c), for trace-cmd report
 * and KernelShark: the Welcome's header texts and clock, each Schema's
 * format text and the HostTexts (from the library's byte tap), the pages
 * by CPU, and the daemon's loss reports as each CPU's stats.
 *
 * protobuf: every frame as it came, delimited (the library's byte tap): the
 * Welcome with the header texts, a Schema with the format text of each
 * event, Pages of sub-buffers as the kernel wrote them, and Lost reports.
 * Any protobuf library reads the file back.
 *
 * Everything here comes from the daemon, over a network for a fleet: it is
 * untrusted, and fuzzed (fuzz-record). A full disk stops the recording
 * with a clear error; the file keeps what was whole before. The file is
 * written under a temporary name beside it and renamed at the end: a run
 * that never streamed leaves an earlier recording of that name as it was.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ringtap.h"

struct tracedat;

/* What the daemon reported lost on one CPU, by where it was lost. */
struct cpu_losses {
	uint64_t kernel, queue, malformed;
	uint64_t uncounted;	/* reports whose count nobody kept */
};

struct recording {
	FILE *msgs;			/* what goes wrong and the progress: stderr */
	const char *path;
	char *tmp_path;			/* what is written: renamed to path at the close */
	bool streamed;			/* an event came after the Welcome: path is replaced */
	bool tracedat;
	FILE *out;			/* protobuf */
	char *out_buf;			/* its stdio buffer */
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
	uint64_t resumes;		/* reconnections that resumed: nothing is missing */
	unsigned int host_texts;	/* HostTexts frames taken */
	bool line_open;			/* a progress line on a terminal, not ended */
	struct cpu_losses *cpu;		/* Welcome.cpus of them */
	unsigned int cpus;
};

/*
 * Creates a temporary file beside path (path itself is not touched);
 * -errno, with the reason on stderr (msgs, from then on).
 */
int recording_open(struct recording *r, const char *path, bool tracedat);

/*
 * ringtap_client_opts.tap (ctx the recording), with record views on: every
 * frame as it came, delimited. The protobuf file takes each one; trace.dat
 * the format texts of Schemas and the HostTexts.
 */
void recording_tap_bytes(void *ctx, const uint8_t *frame, size_t len);

/* After the (first) Welcome: the CPUs' counters, the trace.dat's header. -errno, said on stderr. */
int recording_start(struct recording *r, const Ringtap__Welcome *welcome);
/* Each new connection's Welcome in the clock file. */
void recording_clock_boot(struct recording *r, const Ringtap__Welcome *welcome);
/* A reconnection: what happened meanwhile is not in the file. */
void recording_gap(struct recording *r);

/* One event of ringtap_next(); false (and why, on stderr) when the recording must stop. */
bool recording_event(struct recording *r, const struct ringtap_event *ev);

/* The buffered frames to disk: on a pause in the stream and once a second. */
void recording_flush(struct recording *r);
/*
 * "N events, P pages, B bytes, L lost (cpuC L, ...)" on msgs: in place on a
 * terminal; the last one (the summary) ends with the file it goes to.
 */
void recording_progress(struct recording *r, bool last);
/* "\n" when a message must first end the progress line drawn in place, else "". */
const char *recording_nl(struct recording *r);

/* Ends the file (trace.dat: stats, then the pages into place). The exit status: 0 or 1. */
int recording_finish(struct recording *r);
/*
 * Closes the file and, once the daemon streamed (an event after its
 * Welcome), renames it to path, atomically replacing what was there;
 * otherwise removes it, and path keeps what it held. 1 when that failed
 * (said on stderr), else 0.
 */
int recording_close(struct recording *r);
