/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * cpu_reader: whole sub-buffers from one CPU's trace_pipe_raw.
 *
 * Reads never block (a blocking read of trace_pipe_raw in 6.1 never returns
 * at the end of the data); the event loop drives every CPU from one timer
 * and caps the pages taken from one CPU per pass so a busy CPU cannot starve
 * the others. Hands each page on untouched: decoding is decode.c's job.
 */
#include <stdbool.h>
#include <stdint.h>

struct rt_page_buf;
struct rt_session;
struct tracefs_cpu;

/*
 * One page, in page->data: fn may keep a reference (a raw subscriber's
 * queue does), and the next page is then read into a new buffer.
 */
typedef int (*rt_page_fn)(int cpu, struct rt_page_buf *page, unsigned int len, void *ctx);

struct rt_cpu_reader {
	int cpu;
	int fd;
	struct tracefs_cpu *tcpu;
	struct rt_page_buf *buf;	/* NULL: none could be had; the next drain tries again */
	unsigned int buf_size;
	bool is_file;			/* a captured file, not a live trace_pipe_raw */
	bool eof;			/* a captured file ran out; live buffers never do */
	bool out_of_memory;		/* the last drain ended for want of a page buffer */
	unsigned long long pages;
	unsigned long long bytes;
};

/*
 * 1 when the CPU is online, 0 when offline, -errno. A CPU without an
 * "online" file (often cpu0) cannot go offline.
 */
int rt_cpu_online(int cpu);

int rt_cpu_reader_open(struct rt_cpu_reader *reader, struct rt_session *session, int cpu,
		       unsigned int sub_buffer_size);
void rt_cpu_reader_close(struct rt_cpu_reader *reader);

/*
 * Reads up to max_pages (0: until drained) and passes each to fn.
 * Returns the number of pages read, or -errno (fn's non-zero return stops
 * the drain and is returned). Without memory for a buffer to read into, the
 * drain ends early: the kernel keeps the pages, or counts what it overwrites.
 */
int rt_cpu_reader_drain(struct rt_cpu_reader *reader, unsigned int max_pages, rt_page_fn fn,
			void *ctx);
