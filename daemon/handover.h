/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * handover: what one ringtapd keeps for the next across a planned restart
 * under systemd (`systemctl restart`), and what the next takes back.
 *
 * At a SIGTERM that PID 1 says is a restart, the tracefs instance stays
 * with tracing on, and the fd store (fdstore.c) gets each CPU's
 * trace_pipe_raw, each Unix-socket subscriber's connection and a state
 * memfd (core/state.c): every such subscriber's subscription, encoding,
 * Schemas sent, and the bytes queued for it and not yet written, a frame
 * begun included, so the next ringtapd writes its rest and no subscriber
 * sees a frame cut or twice. TCP subscribers (TLS cannot be handed on),
 * and connections still in their handshake or saying goodbye, end as at a
 * stop. At the start the instance is adopted when its trace fds come back
 * with a state this release reads; each subscriber is served again without
 * a new Welcome. After a crash the state kept from the start (FDNAME=crash,
 * armed at each start) comes back alone: the instance and ring are adopted
 * the same way, the counts taken from the ring, no subscriber kept (they
 * resume by their tokens, replay.h). Anything else (a stop, no systemd, a
 * state it cannot read) starts as before: the store emptied first, a stale
 * instance reclaimed.
 */
struct ringtapd;

/* Before the session: takes back what the store kept and decides to adopt the instance. */
void ringtapd_adopt_begin(struct ringtapd *d);
/* After the session, before the pump: the trace fds handed back, for the CPU readers. */
void ringtapd_adopt_trace_fds(struct ringtapd *d);
/* After the server: the kept subscribers served again; the store emptied. */
void ringtapd_adopt_end(struct ringtapd *d);
/*
 * At the end of the start, under systemd: each CPU's trace fd, the page
 * ring and a state with the instance, the ring's geometry and the resume
 * secret go into the fd store (FDNAME=crash for the state), so that after
 * a crash (SIGKILL, SIGSEGV, the watchdog) the next ringtapd adopts the
 * instance and ring as at a restart, and subscribers resume with their
 * tokens. Logs what fails (nothing is kept then: a crash starts afresh).
 */
void ringtapd_arm_store(struct ringtapd *d);
/*
 * Before NATS starts, under systemd: a mark of where publishing stands,
 * kept in the store (FDNAME=nats) so that a crash's successor publishes
 * again what JetStream had not acknowledged. After a crash whose mark the
 * ring still covers: *from and *places (the caller frees them) to go on
 * with the crashed run's numbers, then ringtapd_nats_republish. NULL: none kept.
 */
struct rt_nats_mark;
struct rt_publisher_from;
struct rt_pub_place;
struct rt_nats_mark *ringtapd_nats_mark(struct ringtapd *d, struct rt_publisher_from *from,
					struct rt_pub_place **places);
void ringtapd_nats_republish(struct ringtapd *d, const struct rt_pub_place *places);
/* What is published (events, host), hashed: a mark of something else is not gone on from. */
uint64_t ringtapd_nats_key(const struct ringtapd *d);
/* After NATS started: its mark joins what the start keeps for a crash (FDNAME=nats). */
void ringtapd_arm_nats(struct ringtapd *d);
/* A real stop: what the start kept comes out of the store, so the instance can go. */
void ringtapd_disarm_store(struct ringtapd *d);
/*
 * At SIGTERM: 0 when this stop is a restart and everything is in the
 * store (the loop then just exits, leaving the instance), or -errno when
 * it is a stop as before (not a restart, no systemd, the store refused).
 */
int ringtapd_hand_over(struct ringtapd *d);
