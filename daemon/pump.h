/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * pump: pages from every CPU's trace_pipe_raw through the decoder to where
 * they go: the server's subscribers, NATS, or text lines on stdout.
 *
 * Owns the page ring (page_ring.h) its per-CPU readers read into, the
 * decoder, each CPU's accounting (records, events the kernel lost,
 * malformed pages), which each page's slot carries, and the watch on CPUs
 * going offline. The loop (loop.c) decides when it runs; a pass takes at most
 * max_pages pages from a CPU so a busy one cannot starve the others. Logs
 * what it skips (a malformed page, a CPU's change), once each.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "why.h"

struct rt_layout;
struct rt_nats;
struct rt_page_ring;
struct rt_ring;
struct rt_state_cpu;
struct rt_pump;
struct rt_server;
struct rt_session;

/* Where records go; any may be NULL. */
struct rt_pump_sinks {
	struct rt_server *server;
	struct rt_nats *nats;
	FILE *text;			/* --stdout */
	unsigned int text_flags;	/* RT_TEXT_* */
};

struct rt_pump_totals {
	uint64_t records;
	uint64_t kernel_lost;		/* overwritten by the kernel before they were read */
	uint64_t malformed_pages;	/* skipped whole: their records' number is unknown */
	uint64_t pages;			/* sub-buffers read (rt_pump_cpu_totals only) */
	uint64_t unknown;		/* records of an event without a format (the same) */
	uint64_t inexact_pages;		/* pages that said "lost some" only (the same) */
};

/*
 * One reader per CPU of the session, and a ring of ring_pages slots per CPU
 * (0: RT_CONFIG_RING_BUFFERS times the kernel's buffer), or, after a
 * restart, one that goes on from the ring the previous ringtapd handed
 * over in ring_fd (-1: none; closed by the caller). A ring that cannot be
 * taken over is warned about and a new one made. -errno with why.
 */
int rt_pump_new(struct rt_pump **out, struct rt_session *session, struct rt_layout *layout,
		unsigned long ring_pages, int ring_fd, struct rt_why *why);
void rt_pump_free(struct rt_pump *pump);
void rt_pump_set_sinks(struct rt_pump *pump, const struct rt_pump_sinks *sinks);
/* The ring every page is read into (what RING readers map). */
struct rt_page_ring *rt_pump_ring(const struct rt_pump *pump);
/* Whether the ring went on from the previous ringtapd's: its readers can be resumed. */
bool rt_pump_ring_continued(const struct rt_pump *pump);

/* One pass over every CPU: the pages read, or -errno (logged). max_pages 0: to the end. */
int rt_pump_drain(struct rt_pump *pump, unsigned int max_pages);
/* One CPU only (its buffer filled up): the pages read, or -errno (logged). */
int rt_pump_drain_cpu(struct rt_pump *pump, int cpu, unsigned int max_pages);
int rt_pump_ncpus(const struct rt_pump *pump);
/* The CPU's trace_pipe_raw to poll(); -1 for a captured file, which cannot be polled. */
int rt_pump_fd(const struct rt_pump *pump, int cpu);
/* Whether the last rt_pump_drain() took max_pages from some CPU: it may have left pages there. */
bool rt_pump_capped(const struct rt_pump *pump);
/*
 * Passes of max_pages a CPU that read a whole buffer (rounded up, and the
 * page being written); UINT_MAX for a captured tree, which does not refill.
 */
unsigned int rt_pump_passes_per_buffer(const struct rt_pump *pump, unsigned int max_pages);
/* Every CPU of a captured tree read to its end (live buffers never end). */
bool rt_pump_all_eof(const struct rt_pump *pump);
/* CPUs that went offline or came back since the last look, told to subscribers. */
void rt_pump_check_cpus(struct rt_pump *pump);

void rt_pump_totals(const struct rt_pump *pump, struct rt_pump_totals *totals);
/* One CPU's (ringtap status). */
void rt_pump_cpu_totals(const struct rt_pump *pump, int cpu, struct rt_pump_totals *totals);
/*
 * After a restart, before the first page: the CPU's counts as the previous
 * ringtapd left them (the state), so that STATUS=, ringtap status and the
 * stop's report count from the instance's start, as the kernel's counters
 * do, and the ring's slots go on counting the events before each page.
 */
void rt_pump_restore_cpu(struct rt_pump *pump, int cpu, const struct rt_state_cpu *from);
/*
 * After a crash, the CPU's counts restored: the page the crashed ringtapd
 * had read from the kernel (its slot in prev marked, not committed) goes
 * into this one's ring as the CPU's next page. true when there was one.
 */
struct rt_nats;
struct rt_pub_place;
/*
 * After a crash, with NATS: whether the ring still holds every page from
 * the crashed run's mark on (*missing: the pages it no longer holds).
 */
bool rt_pump_ring_holds(const struct rt_pump *pump, const struct rt_pub_place *from,
			uint64_t *missing);
/*
 * ... and then the ring's pages from the mark up to where this run reads
 * on, to NATS alone, as the crashed run had offered them: with its numbers
 * (nats took them over), each message gets the id it had and JetStream
 * keeps it once. *pages: how many. 0, -ESTALE (the ring no longer held a
 * page), -EBADMSG (the ring's numbers disagree), -ENOMEM.
 */
int rt_pump_republish(struct rt_pump *pump, struct rt_nats *nats, const struct rt_pub_place *from,
		      uint64_t *pages);
/*
 * After a crash: the CPU's page `page` passed on from the crashed run's ring
 * when that run had read it from the kernel and died before its commit
 * (true); else false, why saying what the slot held.
 */
bool rt_pump_recover_page(struct rt_pump *pump, const struct rt_ring *prev, int cpu,
			  uint64_t page, struct rt_why *why);
/*
 * After a crash, the page recovered or not: events the kernel handed over
 * on the CPU beyond those the ring counts (the crashed run read them and
 * died before they reached its ring). They are reported lost, exactly,
 * before the CPU's next page: to subscribers then streaming and NATS, and
 * in the ring's counts (a gap in the events before it) to those that
 * resume. 0 when the kernel's count cannot be trusted (not our instance,
 * no counters, malformed pages uncounted).
 */
uint64_t rt_pump_count_unread(struct rt_pump *pump, int cpu);
/*
 * At the stop, tracing off: every CPU read until the kernel's counters say
 * it holds nothing, then what they say was lost beyond what the pages said
 * (overwritten after the last page read; commit overruns and drops, which
 * no page carries; events still unread) reported to everyone.
 */
void rt_pump_finish(struct rt_pump *pump);
/* A line per CPU next to the kernel's own counters, for the log at the stop. */
void rt_pump_report(const struct rt_pump *pump, struct rt_session *session);
