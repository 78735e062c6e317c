/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * replay: a resumable subscriber (Hello.resumable) and the catch-up of one
 * that resumes (Hello.resume). Owns the token check (token.h: the daemon's
 * secret, this peer), the Welcome's resume fields, and the subscriber's
 * catch-up: from the seqs it last received, the pages the page ring still
 * holds (the previous ringtapd's area first, after a restart or a crash)
 * decoded and queued for it alone, as fast as its queue takes them; the
 * live stream passes it by until it has caught up with the ring's writer,
 * then it is served like any other. What the ring no longer held is
 * reported to it as lost (QUEUE), as are the kernel's losses it missed.
 * The same catch-up serves a subscriber whose queue cannot take a page
 * (replay_spill): a slow one is paced by the ring rather than dropped.
 */
#include <stdbool.h>
#include <stdint.h>

#include "encode.h"
#include "ring.h"
#include "ringtap.pb-c.h"

struct fanout;
struct rt_conn;
struct rt_decoder;
struct rt_host;
struct rt_layout;
struct rt_page_ring;
struct rt_session;
struct rt_token_secret;
struct rt_why;

/* What of the server a resume works with (conn.c fills it in). */
struct replay_env {
	struct rt_session *session;
	const struct rt_layout *layout;
	const struct rt_host *host;
	struct fanout *fan;
	struct rt_page_ring *ring;	/* NULL: none, no resume */
	const struct rt_token_secret *secret;
	struct rt_decoder **decoder;	/* made at the first catch-up that decodes */
};

/*
 * Whether c may resume from there: its token is this peer's and this
 * secret's, and no place is ahead of what this ringtapd read. -errno with
 * why. A ring reader needs no more (it keeps its place in the ring).
 */
int replay_check(const struct replay_env *env, struct rt_conn *c, const Ringtap__Resume *resume,
		 struct rt_why *why);
/* A conn that asked to resume: the token checked, where it starts on each CPU. -errno with why. */
int replay_begin(const struct replay_env *env, struct rt_conn *c, const Ringtap__Resume *resume,
		 struct rt_why *why);
/*
 * A subscriber whose queue cannot take the page just read on cpu (the page
 * ring's last on that CPU): rather than drop it, it catches up from the
 * ring, that page first, as fast as its queue takes pages, and loses only
 * what the ring no longer holds (reported as lost). The caller lets the
 * page's pending Batch go. 0; -ESTALE, -EOPNOTSUPP (no ring), -ENOMEM:
 * the caller drops the page as before.
 */
int replay_spill(const struct replay_env *env, struct rt_conn *c, unsigned int cpu);
/*
 * Where a catch-up is on one CPU: the last seq in the subscriber's queue,
 * and (placed) the ring cursor with the counts it was told of, so that a
 * loss is told once whichever ringtapd reads on.
 */
struct replay_place {
	uint64_t after;
	bool placed;
	struct rt_ring_cursor cur;
};
/* Where a catching-up conn is, per CPU: to carry it over a restart. */
void replay_places(const struct rt_conn *c, struct replay_place *out, unsigned int ncpus);
/* The next ringtapd: a kept conn catches up on from those places. -errno with why. */
int replay_adopt(const struct replay_env *env, struct rt_conn *c, const struct replay_place *at,
		 unsigned int ncpus, struct rt_why *why);
/* The places packed for the restart's state (rt_state_sub.catch_up); 0 or -ENOMEM. */
int replay_pack_places(const struct rt_conn *c, unsigned int ncpus, struct rt_buf *out);
/* replay_adopt() from what replay_pack_places() packed. -errno with why. */
int replay_adopt_packed(const struct replay_env *env, struct rt_conn *c, const uint8_t *bytes,
			size_t len, struct rt_why *why);
/*
 * Its selection changed (an Update) while it catches up: a CPU it adds is
 * read from the writer's place on, one it drops no more.
 */
void replay_reselect(struct rt_conn *c);
/* A resumable conn's Welcome frame into out (its token, and per CPU the seq it starts after). */
int replay_welcome(const struct replay_env *env, struct rt_conn *c, uint32_t version,
		   Ringtap__Encoding enc, struct rt_buf *out);
/*
 * Queues more of the catch-up, until half its queue is full or it has
 * caught up (then it is live). 0, with *nomem what an allocation failed
 * for (the record or batch is counted lost to it already), or -EBADMSG
 * (the ring's numbers contradict themselves), -ENOMEM: the catch-up cannot
 * go on. The caller (conn.c) says it.
 */
int replay_step(struct rt_conn *c, const char **nomem);
/*
 * It leaves before it caught up (its Bye, the stop): what it had still to
 * read is reported lost to it, the catch-up ends.
 */
void replay_abandon(struct rt_conn *c);
void replay_free(struct rt_conn *c);
