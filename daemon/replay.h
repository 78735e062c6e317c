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
 */
#include <stdbool.h>
#include <stdint.h>

#include "ringtap.pb-c.h"

struct rt_conn;
struct rt_why;

/* A conn that asked to resume: the token checked, where it starts on each CPU. -errno with why. */
int replay_begin(struct rt_conn *c, const Ringtap__Resume *resume, struct rt_why *why);
/* A resumable conn's Welcome frame (its token, and per CPU the seq it starts after). */
int replay_welcome(struct rt_conn *c, uint32_t version, Ringtap__Encoding enc);
/*
 * Queues more of the catch-up, until half its queue is full or it has
 * caught up (then it is live). false when c was closed (told why).
 */
bool replay_step(struct rt_conn *c);
void replay_free(struct rt_conn *c);
