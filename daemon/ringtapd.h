/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * ringtapd: the daemon's one context. main.c fills it module by module in
 * the order they start and empties it in reverse; settings.c reads what it
 * is told to do, loop.c runs the timers and the stop, reload.c applies a
 * changed settings file. No other state is global.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <systemd/sd-event.h>

#include "config.h"
#include "fdstore.h"
#include "host.h"
#include "server.h"
#include "state.h"
#include "token.h"
#include "tracefs.h"

struct rt_layout;
struct rt_nats;
struct rt_pump;

/* The steps of a start, timed for the line that says it is ready (a restart's silence is in it). */
enum ringtapd_start_step {
	START_MAIN,		/* main() entered: the sandbox, exec and the libraries before */
	START_SETTINGS,
	START_INSTANCE,		/* the instance opened or adopted, its layout read */
	START_EVENTS,
	START_RING,		/* the readers and the page ring */
	START_SUBSCRIBERS,	/* listening, and a restart's subscribers served again */
	START_STEPS
};

struct ringtapd {
	/* What to do (settings.c): the command line over the file over the defaults. */
	const char *config_path;
	bool config_path_given;
	bool print_config;
	bool exit_now;			/* --help or --version said all there is */
	struct rt_config cli;		/* what the command line set: it beats the file */
	struct rt_config cfg;		/* in force */
	struct rt_session_opts opts;
	struct rt_server_opts server_opts;
	char **event_globs;		/* enabled from the start */
	char **nats_globs;		/* what is published; NULL: no NATS */
	bool to_stdout;
	bool once;
	unsigned int wait_subscribers;	/* read nothing until this many subscribed */
	unsigned int text_flags;
	unsigned int max_latency_ms;	/* the bound for subscribers that ask none, and NATS */
	unsigned int drain_ms;		/* a fixed drain period (0: from the latency bounds) */
	unsigned int wake_percent;	/* buffer fill that wakes us at once */
	unsigned int max_pages_per_pass;
	unsigned int status_sec;
	uint64_t duration_us;

	/* A restart's handover (handover.c): what the store gave back, the state read from it. */
	struct rt_fdstore store;
	uint8_t *state_bytes;
	struct rt_state state;
	bool have_state;
	bool crashed;			/* the state is the one kept from the start: a crash */
	/* What this run keeps in the store from its start, for a crash (handover.c). */
	struct rt_fdstore armed;
	int nats_mark_fd;		/* the last run's NATS mark (handover.c); -1: none */
	struct rt_token_secret secret;	/* resume tokens': the previous run's, else new */
	bool have_secret;

	/* The modules, in the order they start. */
	struct rt_session *session;
	struct rt_layout *layout;
	struct rt_pump *pump;
	sd_event *loop;
	struct rt_server *server;
	struct rt_host_id host_id;
	struct rt_nats *nats;

	/* The loop (loop.c). */
	sd_event_source *drain_timer, *duration_timer, *status_timer, *cpu_check_timer;
	sd_event_source **cpu_io;	/* per CPU: its buffer filled up, or data came while idle */
	bool idle;			/* nothing came lately: no timer, woken by the first record */
	unsigned int empty_passes;
	unsigned int logged_period_ms;	/* the drain period the log last gave */
	bool stopping;			/* tracing is off; subscribers take the rest */
	bool abandoned;			/* past the grace: the rest became Lost reports */
	bool said_bye;			/* subscribers were sent the stream's last frame */
	uint64_t stop_deadline;
	uint64_t nats_deadline;		/* stopping: when unacknowledged publishes are given up */
	uint64_t status_records, status_at;	/* at the last STATUS= */
	uint64_t started_ns;		/* CLOCK_MONOTONIC: ringtap status's uptime */
	uint64_t forked_ns;		/* CLOCK_MONOTONIC of the fork, to the kernel's 10 ms */
	uint64_t start_ns[START_STEPS];	/* CLOCK_MONOTONIC when each step ended */
};

/* settings.c: options, then the file; -EINVAL after the one message that says why. */
int ringtapd_parse_args(struct ringtapd *d, int argc, char **argv);
/* Defaults, then the file, then the command line, into cfg. Logs what is wrong, once. */
int ringtapd_load_config(struct ringtapd *d, struct rt_config *cfg);
/* Points the session, server and loop options at the settings in force. */
int ringtapd_apply_settings(struct ringtapd *d);
/* The server's limits in cfg (at start and at a reload). */
void ringtapd_server_limits(const struct rt_config *cfg, struct rt_server_limits *limits);
/* max_latency_ms, drain_ms and wake_percent from the settings (a start, a reload). */
void ringtapd_apply_timing(struct ringtapd *d, const struct rt_config *cfg);
/* "a,b,c" into a NULL-terminated list; -EINVAL for an empty one. */
int ringtapd_split_list(const char *csv, char ***out);
void ringtapd_release_settings(struct ringtapd *d);

/* loop.c: signals, the drain timer, --duration and STATUS=; logs what fails. */
int ringtapd_loop_start(struct ringtapd *d);
/* Runs until the stop is done; 0, or -errno (already said in the log). */
int ringtapd_loop_run(struct ringtapd *d);
void ringtapd_loop_stop(struct ringtapd *d);
/* The latency bounds changed (a subscriber, a reload): logs the period, re-arms a shorter one. */
void ringtapd_timing_changed(struct ringtapd *d);
/* A reload changed wake_percent: the kernel's buffer_percent too, unless idle (it is 0 then). */
void ringtapd_wake_changed(struct ringtapd *d);
/* Tracing off, every CPU read to the end, then subscribers get their grace. */
void ringtapd_begin_stop(struct ringtapd *d);
/* The losses per CPU and NATS's counts, in the log. */
void ringtapd_report(struct ringtapd *d);

/* status.c: the start's time noted, and the server told who answers a status request. */
void ringtapd_status_init(struct ringtapd *d);
/* The counters of every module as one Status frame (server-opts.h's status); 0 or -ENOMEM. */
int ringtapd_status(void *userdata, struct rt_buf *frame);

/* reload.c: the SIGHUP handler. */
int ringtapd_on_reload(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata);
