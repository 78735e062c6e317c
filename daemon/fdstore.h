/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * fdstore: systemd's file descriptor store, as ringtapd uses it across a
 * planned restart. Owns the names kept there (cpuN: a CPU's trace_pipe_raw,
 * stored with FDPOLL=0, since an offline CPU's polls as an error and PID 1
 * would drop it; connN: a subscriber's connection; ring: the page ring's
 * memfd, read-write; state: the memfd core/state.c's bytes are in; crash:
 * the state kept from the start; nats: where NATS publishing stands with
 * JetStream, core/publish-mark.h), taking them back from LISTEN_FDS at the
 * start (the socket unit's own descriptors are left to the listener, as
 * sd_listen_fds() would hand them), removing them from the store once
 * taken or at a real stop, and asking PID 1 whether a stop is a restart.
 *
 * Under systemd the store holds, from a start on, each CPU's trace fd,
 * the ring and the crash state (handover.c arms it), and across a planned
 * restart the connections and the state too. A `systemctl stop` empties it
 * before the instance goes; a run without systemd (no NOTIFY_SOCKET) never
 * uses it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rt_fdstore_conn {
	uint32_t id;
	int fd;
};

struct rt_fdstore {
	bool active;			/* collected (or names noted): release has work */
	int *cpu_fds;			/* per CPU handed back, -1 where none came */
	int ncpu_fds;
	int state_fd;			/* -1: none */
	int crash_fd;			/* the state kept from the start, for a crash; -1: none */
	int ring_fd;			/* -1: none */
	int nats_fd;			/* the publishing mark; -1: none */
	struct rt_fdstore_conn *conns;
	size_t n_conns;
	char **names;			/* every name taken back, to remove from the store */
	size_t n_names;
};

/*
 * At the start, before the listener: takes what the store handed back out
 * of LISTEN_FDS and leaves the rest there for sd_listen_fds(). 0 (nothing
 * handed back is 0 too), or -errno, logged.
 */
int rt_fdstore_collect(struct rt_fdstore *fs);
bool rt_fdstore_any(const struct rt_fdstore *fs);
/* The trace fd handed back for cpu (now the caller's), or -1. */
int rt_fdstore_take_cpu(struct rt_fdstore *fs, int cpu);
/* The page ring's memfd handed back (now the caller's), or -1. */
int rt_fdstore_take_ring(struct rt_fdstore *fs);
/* The NATS publishing mark handed back (now the caller's), or -1. */
int rt_fdstore_take_nats(struct rt_fdstore *fs);
/* The connection stored as conn<id> (now the caller's), or -1: it went while we were away. */
int rt_fdstore_take_conn(struct rt_fdstore *fs, uint32_t id);
/*
 * Removes every name taken back from the store (PID 1 would otherwise keep
 * the descriptors open: a subscriber closed later would never see its end,
 * the instance could not be removed) and closes what nobody took. Waits
 * until PID 1 has done so (a barrier), so an rmdir that follows finds no
 * stored trace fd.
 */
void rt_fdstore_release(struct rt_fdstore *fs);
/* The names noted, forgotten, and left in the store (a handover keeps them for the next one). */
void rt_fdstore_forget(struct rt_fdstore *fs);

/* Adds name to those rt_fdstore_release() removes from the store; 0 or -ENOMEM. */
int rt_fdstore_note(struct rt_fdstore *fs, const char *name);

/* Whether systemd can keep anything for us (NOTIFY_SOCKET is set). */
bool rt_fdstore_available(void);
/*
 * Asks PID 1 whether the job stopping our unit is a restart (restart,
 * try-restart, reload-or-restart): 1 when it is, 0 when not (a stop,
 * none, a shutdown), -errno when PID 1 could not be asked (then it is not
 * one, to be safe: everything is removed as before).
 */
int rt_fdstore_restarting(void);
/* Stores fd under name (FDPOLL=0 with no_poll); 0 or -errno. */
int rt_fdstore_put(const char *name, int fd, bool no_poll);
/* Returns once PID 1 has processed everything sent so far; 0 or -errno. */
int rt_fdstore_barrier(void);
