// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <time.h>

#include "reconnect.h"

#define PAUSE_MIN_MS 100
#define PAUSE_MAX_MS 2000

double cli_now_s(void)
{
	struct timespec ts;

	/* Read per page by the recorder: the coarse clock costs no clock-source read. */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool told_to_stop(const struct cli_reconnect *how)
{
	return (how->stop && *how->stop) || (how->deadline && cli_now_s() >= how->deadline);
}

int cli_reconnect(struct ringtap_client **out, const struct ringtap_client_opts *opts,
		  const struct cli_reconnect *how, struct ringtap_resume *place,
		  bool *resumed, char *refused, size_t refused_size,
		  struct ringtap_connect_error *err)
{
	int pause_ms = PAUSE_MIN_MS;

	*out = NULL;
	if (resumed)
		*resumed = false;
	while (!told_to_stop(how)) {
		struct pollfd pfd = { .fd = how->wake_fd, .events = POLLIN };
		int ret;

		/* A signal interrupts the wait: the flag or the descriptor says whether to go on. */
		if (poll(&pfd, how->wake_fd >= 0, pause_ms) > 0)
			return -ECANCELED;
		if (told_to_stop(how))
			break;
		ret = place ? ringtap_connect_resumable(out, opts, place, err) :
			      ringtap_connect(out, opts, err);
		if (!ret) {
			if (resumed)
				*resumed = place != NULL;
			return 0;
		}
		/* Its place is gone with the daemon that gave it: a new stream, without delay. */
		if (place && err->refusal == RINGTAP__REFUSAL_REASON__RESUME_REFUSED) {
			if (refused)
				snprintf(refused, refused_size, "%s", err->text);
			place = NULL;
			ret = ringtap_connect_resumable(out, opts, NULL, err);
			if (!ret)
				return 0;
		}
		if (err->refusal)
			return ret;
		if (pause_ms < PAUSE_MAX_MS)
			pause_ms *= 2;
	}
	return -ECANCELED;
}
