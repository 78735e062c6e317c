/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * tracedat: writes trace-cmd's trace.dat, version 6 (trace-cmd.dat.v6(5)),
 * the file trace-cmd report and KernelShark read.
 *
 * Owns the output file's layout: the header texts (header_page,
 * header_event, ftrace and event formats, kallsyms, printk formats, saved
 * cmdlines), the options (trace clock, per-CPU stats) and the per-CPU data.
 * Sub-buffers arrive interleaved across CPUs but v6 stores each CPU's
 * contiguously, so each CPU's pages wait in an unlinked spool file next to
 * the output until tracedat_finish() moves them into place, the spool
 * shrinking as its pages move: a page is on disk twice only while its chunk
 * moves. 1 MiB of room is held from tracedat_open() on, for the header.
 *
 * Nothing about the kernel is assumed: byte order, long size and sub-buffer
 * size are the caller's, as the kernel's header_page gives them. The writer
 * does not look inside pages. No logging, no signal handling.
 *
 * Write errors (ENOSPC, EFBIG, EIO): the first one sticks. tracedat_add_page()
 * returns it from then on; tracedat_finish() still puts the whole pages it
 * can into a file trace-cmd reads, and returns that error.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tracedat;

struct tracedat_params {
	bool big_endian;		/* the kernel's byte order; the file's numbers follow it */
	unsigned int long_size;		/* 4 or 8: header_page's commit field size */
	unsigned int page_size;		/* sub-buffer size: a power of two, 256 B to 16 MiB */
	unsigned int cpus;		/* pages come for CPUs 0 to cpus - 1 */
	const char *spool_dir;		/* where the spools go, the output's directory; NULL: "." */
};

/*
 * Starts a trace.dat on fd, a regular file opened for writing (it is
 * truncated). The caller keeps fd and closes it after tracedat_free().
 * -EINVAL on bad parameters, -ENOMEM.
 */
int tracedat_open(struct tracedat **out, int fd, const struct tracedat_params *p);

/* Closes the spools and frees; unfinished, the output stays empty. NULL is fine. */
void tracedat_free(struct tracedat *w);

/* The texts of events/header_page and events/header_event; both are required. */
int tracedat_set_headers(struct tracedat *w, const char *header_page, size_t header_page_len,
			 const char *header_event, size_t header_event_len);

/*
 * One event's format text, as events/SYSTEM/NAME/format holds it. The
 * "ftrace" system goes where trace-cmd keeps ftrace's own formats. The same
 * text twice is kept once. -EINVAL for an empty system or text.
 */
int tracedat_add_format(struct tracedat *w, const char *system, const char *text, size_t len);

/* Optional texts: /proc/kallsyms, printk_formats, saved_cmdlines. Empty when not set. */
int tracedat_set_kallsyms(struct tracedat *w, const char *text, size_t len);
int tracedat_set_printk_formats(struct tracedat *w, const char *text, size_t len);
int tracedat_set_cmdlines(struct tracedat *w, const char *text, size_t len);

/* The trace clock's name, e.g. "local" or "mono"; trace-cmd shows µs only for ns clocks. */
int tracedat_set_clock(struct tracedat *w, const char *name);

/*
 * A CPU's stats in the style of the kernel's per_cpu/cpuN/stats, "NAME: VALUE"
 * lines; trace-cmd report --stat shows them after a "CPU: N" line. Replaces
 * what was set before.
 */
int tracedat_set_cpu_stats(struct tracedat *w, unsigned int cpu, const char *text);

/*
 * Appends one sub-buffer of exactly page_size bytes to a CPU's data.
 * -EINVAL for a CPU out of range or a wrong length (nothing written);
 * otherwise 0 or the sticky write error.
 */
int tracedat_add_page(struct tracedat *w, unsigned int cpu, const void *page, size_t len);

struct tracedat_result {
	bool readable;			/* the header is written: trace-cmd reads the file */
	uint64_t pages;			/* sub-buffers in the file */
	uint64_t pages_dropped;		/* taken by tracedat_add_page(), not in the file */
	uint64_t file_size;
};

/*
 * Moves every CPU's pages into place, then writes the header before them.
 * Short of room it moves a page at a time; when a write still fails, each
 * CPU keeps the whole pages in place that join up with its newest, and the
 * newest pages of the file give way to the header. Returns 0, or the first
 * write error (tracedat_add_page()'s included), the file still readable
 * when res->readable; -EINVAL without the header texts or a second time.
 * res may be NULL.
 */
int tracedat_finish(struct tracedat *w, struct tracedat_result *res);

/*
 * Fault injection for tests: called before every write, cpu the spool's or
 * -1 for the output; returning -errno fails that write as the kernel would.
 */
typedef int (*tracedat_write_hook)(void *ctx, int cpu, uint64_t offset, size_t len);
void tracedat_set_write_hook(struct tracedat *w, tracedat_write_hook hook, void *ctx);
