/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * reconnect: connecting again when ringtapd went away (a restart), for
 * `ringtap stream --reconnect` and `ringtap record --reconnect`. Attempts
 * are spaced by a pause that doubles from 100 ms to 2 s; a daemon that
 * answers with a Refusal ends it (it will not change its mind), but for a
 * resume it refused: then a new stream. A stream resumed from its place
 * (ringtap_connect_resumable()) has no gap.
 */
#include <signal.h>

#include "ringtap.h"

struct cli_reconnect {
	int wake_fd;			/* readable ends the wait (a signalfd); -1: none */
	volatile sig_atomic_t *stop;	/* set ends the wait (a signal handler's flag); NULL: none */
	double deadline;		/* CLOCK_MONOTONIC seconds; 0: none */
};

/*
 * 0 and a connected client; -ECANCELED when the wait was ended or the
 * deadline passed; the refusal's -errno with err filled in. With place, a
 * resumable stream: resumed from the place when the daemon takes it
 * (*resumed true), else (its token refused: a daemon stopped since, not
 * restarted) a new one, and why in refused.
 */
int cli_reconnect(struct ringtap_client **out, const struct ringtap_client_opts *opts,
		  const struct cli_reconnect *how, struct ringtap_resume *place,
		  bool *resumed, char *refused, size_t refused_size,
		  struct ringtap_connect_error *err);

/* CLOCK_MONOTONIC in seconds, for deadlines and the gap's length. */
double cli_now_s(void);
