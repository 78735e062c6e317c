/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * cpu_reader: whole sub-buffers from one CPU's trace_pipe_raw.
 *
 * Reads never block (a blocking read of trace_pipe_raw in 6.1 never returns
 * at the end of the data); the event loop drives every CPU from one timer
 * and caps the pages taken from one CPU per pass so a busy CPU cannot starve
 * the others. Each page is read straight into the next slot of the CPU's
 * circle in the page ring (page_ring.h) and handed on there, untouched:
 * decoding is decode.c's job, and committing the slot with its counts the
 * page's taker's.
 */
#include <stdbool.h>
#include <stdint.h>

struct rt_page_buf;
struct rt_page_ring;
struct rt_session;
struct tracefs_cpu;

/*
 * One page, in page->data (a slot of the ring begun for it): fn commits
 * the slot (rt_page_ring_commit), and may keep a reference to page (a raw
 * subscriber's queue does).
 */
typedef int (*rt_page_fn)(int cpu, struct rt_page_buf *page, unsigned int len, void *ctx);

struct rt_cpu_reader {
	int cpu;
	int fd;
	struct tracefs_cpu *tcpu;
	struct rt_page_ring *ring;	/* where its pages are read into */
	bool is_file;			/* a captured file, not a live trace_pipe_raw */
	bool eof;			/* a captured file ran out; live buffers never do */
	bool out_of_memory;		/* the last drain ended for want of a slot's private copy */
	unsigned long long pages;
	unsigned long long bytes;
};

/*
 * 1 when the CPU is online, 0 when offline, -errno. A CPU without an
 * "online" file (often cpu0) cannot go offline.
 */
int rt_cpu_online(int cpu);

int rt_cpu_reader_open(struct rt_cpu_reader *reader, struct rt_session *session, int cpu,
		       struct rt_page_ring *ring, unsigned int sub_buffer_size);
void rt_cpu_reader_close(struct rt_cpu_reader *reader);

/*
 * Reads up to max_pages (0: until drained) and passes each to fn.
 * Returns the number of pages read, or -errno (fn's non-zero return stops
 * the drain and is returned). Without memory to give a queue that still
 * holds the next slot's page a copy of it, the drain ends early: the kernel
 * keeps the pages, or counts what it overwrites.
 */
int rt_cpu_reader_drain(struct rt_cpu_reader *reader, unsigned int max_pages, rt_page_fn fn,
			void *ctx);
