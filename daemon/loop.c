// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The event loop's own work: the drain passes (the pump), the stop (tracing
 * off, every CPU read to the end, a grace for subscribers and NATS, then
 * the Bye), the stop signals and --duration, SIGHUP (reload.c), and the
 * STATUS= line systemd shows. The loop pings the watchdog itself: a stuck
 * pass stops the pings.
 *
 * Wake-ups follow the rate. While records flow, every CPU is drained every
 * three quarters of the shortest latency bound in force (the subscribers'
 * own, Subscription.max_latency_ms, else the daemon's max_latency_ms; or a
 * fixed drain_ms), and poll() on each CPU's
 * trace_pipe_raw, with the instance's buffer_percent at wake_percent, wakes
 * the loop at once for a CPU whose buffer fills faster than that. After two
 * passes that found nothing the loop goes idle: buffer_percent 0, no timer,
 * and the first record written on any CPU wakes it (and the timer) again.
 * An idle buffer costs no wake-up at all; a busy one is drained before it
 * overruns; a record waits at most a period plus a pass.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-daemon.h>

#include "log.h"
#include "nats.h"
#include "pump.h"
#include "ringtapd.h"

/*
 * Stopping: two seconds for subscribers to take what is queued for them;
 * then what a slow one still has queued is dropped and reported to it,
 * with one more second for that report. JetStream gets five seconds for its
 * acknowledgments and the loss reports owed: a server that is away for
 * good is not waited for.
 */
#define STOP_GRACE_US (2 * 1000000ULL)
#define ABANDON_GRACE_US (1 * 1000000ULL)
#define NATS_STOP_GRACE_US (5 * 1000000ULL)
/* How often the stop and a wait for subscribers look again. */
#define POLL_US 10000

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void set_idle(struct ringtapd *d, bool idle);

void ringtapd_begin_stop(struct ringtapd *d)
{
	if (d->stopping)
		return;
	/* The stop is timed by the timer: awake for it. */
	set_idle(d, false);
	d->stopping = true;
	sd_notify(0, "STOPPING=1");
	if (rt_session_stop(d->session))
		rt_log(LOG_WARNING, "turning tracing off failed: the last pass may not be the last");
	/* What the kernel still holds goes out before the grace starts. */
	rt_pump_finish(d->pump);
	d->stop_deadline = now_us() + STOP_GRACE_US;
	d->nats_deadline = now_us() + NATS_STOP_GRACE_US;
}

/* One look at the stop: 1 when it is done, else 0 and the loop comes back. */
static int stop_step(struct ringtapd *d)
{
	bool nats_done = !d->nats || rt_nats_drained(d->nats) || now_us() > d->nats_deadline;

	if (!d->server)
		return nats_done;
	if (rt_server_drained(d->server)) {
		if (d->said_bye)
			return nats_done;
		/* Everything, losses included, is out: the Bye says so. */
		rt_server_say_bye(d->server);
		d->said_bye = true;
	} else if (now_us() > d->stop_deadline) {
		if (d->abandoned)
			return nats_done;
		/* Too slow for the grace: what it did not take is reported lost. */
		rt_server_abandon(d->server);
		rt_server_say_bye(d->server);
		d->said_bye = true;
		d->abandoned = true;
		d->stop_deadline = now_us() + ABANDON_GRACE_US;
	}
	return 0;
}

static int on_cpu_io(sd_event_source *s, int fd, uint32_t revents, void *userdata);

/*
 * Watches every CPU's buffer again: a poller waits on the queue that
 * buffer_percent chose when it registered, so a change needs a new one.
 */
static int watch_cpus(struct ringtapd *d)
{
	for (int cpu = 0; cpu < rt_pump_ncpus(d->pump); cpu++) {
		int fd = rt_pump_fd(d->pump, cpu), ret;

		d->cpu_io[cpu] = sd_event_source_disable_unref(d->cpu_io[cpu]);
		if (fd < 0)
			continue;
		ret = sd_event_add_io(d->loop, &d->cpu_io[cpu], fd, EPOLLIN, on_cpu_io, d);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static bool pollable(const struct ringtapd *d)
{
	return rt_pump_ncpus(d->pump) && rt_pump_fd(d->pump, 0) >= 0;
}

/* buffer_percent at percent, every CPU watched again; false: the timer alone drains now. */
static bool wake_at(struct ringtapd *d, unsigned int percent)
{
	int ret = rt_session_set_buffer_percent(d->session, percent);

	if (!ret)
		ret = watch_cpus(d);
	if (!ret)
		return true;
	/* Without it the timer alone drains, as before: slower to wake, never late. */
	rt_log(LOG_WARNING, "waking on buffer fill: %s; draining on the timer only",
	       strerror(-ret));
	for (int cpu = 0; cpu < rt_pump_ncpus(d->pump); cpu++)
		d->cpu_io[cpu] = sd_event_source_disable_unref(d->cpu_io[cpu]);
	d->idle = false;
	(void)sd_event_source_set_enabled(d->drain_timer, SD_EVENT_ONESHOT);
	return false;
}

/* Idle: woken by any record; flowing: by the timer, or a buffer at wake_percent. */
static void set_idle(struct ringtapd *d, bool idle)
{
	if (idle == d->idle || !pollable(d) || !wake_at(d, idle ? 0 : d->wake_percent))
		return;
	d->idle = idle;
	d->empty_passes = 0;
	if (!idle)
		(void)sd_event_source_set_time_relative(d->drain_timer, 0);
	(void)sd_event_source_set_enabled(d->drain_timer, idle ? SD_EVENT_OFF : SD_EVENT_ONESHOT);
}

static int on_cpu_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct ringtapd *d = userdata;
	int n;

	if (d->idle) {
		/* The first record after a quiet spell: flowing again, a pass at once. */
		set_idle(d, false);
		return 0;
	}
	for (int cpu = 0; cpu < rt_pump_ncpus(d->pump); cpu++) {
		if (d->cpu_io[cpu] != s)
			continue;
		/* This CPU's buffer reached wake_percent before the timer came. */
		n = rt_pump_drain_cpu(d->pump, cpu, d->max_pages_per_pass);
		if (n < 0)
			return sd_event_exit(d->loop, 1);
		if (n >= (int)d->max_pages_per_pass)
			(void)sd_event_source_set_time_relative(d->drain_timer, 0);
	}
	return 0;
}

/* The shortest bound in force. NATS consumers ask nothing: they get the daemon's. */
static unsigned int latency_bound_ms(const struct ringtapd *d)
{
	unsigned int ms = d->max_latency_ms;

	if (d->server) {
		unsigned int subscribers = rt_server_latency_ms(d->server, d->max_latency_ms);

		if (!d->nats || subscribers < ms)
			ms = subscribers;
	}
	return ms;
}

/*
 * Three quarters of the bound: a pass, and the subscriber's own read, fit in
 * the rest. --once reads to the end at the daemon's pace: a subscriber that
 * accepts a minute must not make the daemon take minutes to finish.
 */
static unsigned int drain_period_ms(const struct ringtapd *d)
{
	return d->drain_ms ?: (d->once ? d->max_latency_ms : latency_bound_ms(d)) * 3 / 4;
}

/*
 * A subscriber came, left or asked again, or a reload changed the bounds. A
 * shorter period starts now, not after the longer one already armed; a
 * longer one at the next pass.
 */
void ringtapd_timing_changed(struct ringtapd *d)
{
	unsigned int period = drain_period_ms(d);
	uint64_t now, due;
	int enabled;

	if (d->stopping || !d->drain_timer)
		return;
	if (period != d->logged_period_ms)
		rt_log(LOG_INFO, "draining every %u ms while records flow (the shortest latency "
		       "bound asked is %u ms)", period, latency_bound_ms(d));
	d->logged_period_ms = period;
	if (d->idle || sd_event_source_get_enabled(d->drain_timer, &enabled) < 0 ||
	    enabled == SD_EVENT_OFF || sd_event_now(d->loop, CLOCK_MONOTONIC, &now) < 0 ||
	    sd_event_source_get_time(d->drain_timer, &due) < 0)
		return;
	if (now + period * 1000ULL < due)
		(void)sd_event_source_set_time(d->drain_timer, now + period * 1000ULL);
}

/*
 * A reload changed wake_percent. While records flow the kernel gets it now:
 * a loop that is never idle never passes through set_idle again. An idle
 * one keeps 0 and writes the new value when the first record wakes it.
 */
void ringtapd_wake_changed(struct ringtapd *d)
{
	if (d->idle || d->stopping || !pollable(d))
		return;
	if (wake_at(d, d->wake_percent))
		rt_log(LOG_INFO, "buffer_percent is now %u", d->wake_percent);
}

static void on_latency_changed(void *userdata)
{
	ringtapd_timing_changed(userdata);
}

/* Whether the drain timer drains: not before --wait-subscribers are in, not once stopping. */
static bool draining(const struct ringtapd *d)
{
	return !d->stopping &&
	       !(d->server && rt_server_subscribers(d->server) < d->wait_subscribers);
}

/* A subscriber said Bye: a pass now (rt_server_pass_done then sends it ours). */
static bool on_pass_wanted(void *userdata)
{
	struct ringtapd *d = userdata;

	if (!draining(d))
		return false;
	/* Reached: a departure before the pass must not pause it and hold this Bye. */
	d->wait_subscribers = 0;
	if (d->idle) {
		set_idle(d, false);
		return true;
	}
	(void)sd_event_source_set_time_relative(d->drain_timer, 0);
	(void)sd_event_source_set_enabled(d->drain_timer, SD_EVENT_ONESHOT);
	return true;
}

static int on_drain_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct ringtapd *d = userdata;
	uint64_t next_us = drain_period_ms(d) * 1000ULL;
	int n;

	if (d->nats)
		rt_nats_poll(d->nats);
	if (d->stopping) {
		if (stop_step(d))
			return sd_event_exit(d->loop, 0);
		next_us = POLL_US;
	} else if (!draining(d)) {
		next_us = POLL_US;
	} else {
		d->wait_subscribers = 0;	/* once reached, later departures do not pause us */
		n = rt_pump_drain(d->pump, d->max_pages_per_pass);
		/* The pump said why: the loop ends with 1, "said". */
		if (n < 0)
			return sd_event_exit(d->loop, 1);
		if (d->server)
			rt_server_pass_done(d->server, !rt_pump_capped(d->pump),
					    rt_pump_passes_per_buffer(d->pump, d->max_pages_per_pass));
		if (d->once && (n == 0 || rt_pump_all_eof(d->pump))) {
			ringtapd_begin_stop(d);
			next_us = 0;
		} else if (rt_pump_capped(d->pump)) {
			/* Pages left behind by the per-pass cap: come back at once. */
			next_us = 0;
		} else if (n == 0 && !d->once && pollable(d) && ++d->empty_passes >= 2) {
			/* Quiet: no more wake-ups until a record comes. */
			set_idle(d, true);
			return 0;
		} else if (n) {
			d->empty_passes = 0;
		}
	}
	return sd_event_source_set_time_relative(s, next_us) ?:
	       sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

/* Once a second, idle or not: a CPU going offline or coming back is told at once. */
static int on_cpu_check(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct ringtapd *d = userdata;

	rt_pump_check_cpus(d->pump);
	return sd_event_source_set_time_relative(s, 1000000) ?:
	       sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static int on_stop_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	ringtapd_begin_stop(userdata);
	return 0;
}

static int on_duration(sd_event_source *s, uint64_t usec, void *userdata)
{
	ringtapd_begin_stop(userdata);
	return 0;
}

/* The NATS part of STATUS= and of the report; "" without NATS. */
static void nats_status(struct ringtapd *d, char *buf, size_t size)
{
	struct rt_nats_stats st;

	buf[0] = '\0';
	if (!d->nats)
		return;
	rt_nats_get_stats(d->nats, &st);
	snprintf(buf, size, "; NATS: %" PRIu64 " records published, %" PRIu64 " dropped "
		 "(buffer full) + %" PRIu64 " failed, %" PRIu64 " messages unacknowledged, %"
		 PRIu64 " sent again", st.records - st.failed, st.dropped, st.failed, st.pending,
		 st.republished);
}

/* STATUS= for systemctl status: who is served, how fast, what was lost. */
static int on_status_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct ringtapd *d = userdata;
	struct rt_pump_totals t;
	uint64_t now = now_us();
	char nats[200];
	double rate;

	rt_pump_totals(d->pump, &t);
	rate = d->status_at && now > d->status_at ?
		       (double)(t.records - d->status_records) * 1e6 / (double)(now - d->status_at) :
		       0;
	d->status_records = t.records;
	d->status_at = now;
	nats_status(d, nats, sizeof(nats));
	sd_notifyf(0, "STATUS=%u subscriber(s), %.0f events/s, %" PRIu64 " events read; lost: %" PRIu64
		   " in the kernel (+%" PRIu64 " malformed pages), %" PRIu64 " by slow subscribers%s",
		   d->server ? rt_server_subscribers(d->server) : 0, rate, t.records, t.kernel_lost,
		   t.malformed_pages, d->server ? rt_server_dropped(d->server) : 0, nats);
	if (!d->status_sec)
		return sd_event_source_set_enabled(s, SD_EVENT_OFF);
	return sd_event_source_set_time_relative(s, d->status_sec * 1000000ULL) ?:
	       sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

void ringtapd_report(struct ringtapd *d)
{
	char nats[200];

	nats_status(d, nats, sizeof(nats));
	if (*nats)
		rt_log(LOG_INFO, "%s", nats + 2);
	rt_pump_report(d->pump, d->session);
}

int ringtapd_loop_start(struct ringtapd *d)
{
	const char *what;
	int ret;

	what = "creating the event loop";
	ret = sd_event_default(&d->loop);
	if (ret < 0)
		goto fail;
	what = "watching the stop and reload signals";
	if ((ret = sd_event_add_signal(d->loop, NULL, SIGINT, on_stop_signal, d)) < 0 ||
	    (ret = sd_event_add_signal(d->loop, NULL, SIGTERM, on_stop_signal, d)) < 0 ||
	    (ret = sd_event_add_signal(d->loop, NULL, SIGHUP, ringtapd_on_reload, d)) < 0)
		goto fail;
	what = "arming the watchdog";
	/* WATCHDOG=1 from the loop itself: a stuck drain stops the pings. */
	ret = sd_event_set_watchdog(d->loop, true);
	if (ret < 0)
		goto fail;
	d->server_opts.latency_changed = on_latency_changed;
	d->server_opts.pass_wanted = on_pass_wanted;
	d->server_opts.userdata = d;
	d->logged_period_ms = drain_period_ms(d);
	what = "arming the drain timer";
	ret = sd_event_add_time_relative(d->loop, &d->drain_timer, CLOCK_MONOTONIC, 0, 1000,
					 on_drain_timer, d);
	if (ret < 0)
		goto fail;
	what = "watching the CPUs' buffers";
	d->cpu_io = calloc((size_t)rt_pump_ncpus(d->pump), sizeof(*d->cpu_io));
	if (!d->cpu_io) {
		ret = -ENOMEM;
		goto fail;
	}
	if (pollable(d)) {
		ret = rt_session_set_buffer_percent(d->session, d->wake_percent);
		ret = ret ?: watch_cpus(d);
		if (ret < 0)
			goto fail;
	}
	what = "arming the CPU check";
	ret = sd_event_add_time_relative(d->loop, &d->cpu_check_timer, CLOCK_MONOTONIC, 1000000,
					 100000, on_cpu_check, d);
	if (ret < 0)
		goto fail;
	what = "arming --duration";
	if (d->duration_us &&
	    (ret = sd_event_add_time_relative(d->loop, &d->duration_timer, CLOCK_MONOTONIC,
					      d->duration_us, 1000, on_duration, d)) < 0)
		goto fail;
	what = "arming the STATUS= timer";
	if (d->status_sec &&
	    (ret = sd_event_add_time_relative(d->loop, &d->status_timer, CLOCK_MONOTONIC, 1000000,
					      100000, on_status_timer, d)) < 0)
		goto fail;
	return 0;
fail:
	rt_log(LOG_ERR, "%s: %s", what, strerror(-ret));
	return ret;
}

int ringtapd_loop_run(struct ringtapd *d)
{
	int ret = sd_event_loop(d->loop);

	if (ret < 0)
		rt_log(LOG_ERR, "the event loop failed: %s", strerror(-ret));
	/*
	 * No-op unless the loop ended on an error: then tracing goes off and the
	 * rest is read and written once, as far as each socket takes it at once;
	 * with no loop left there is no grace and no Bye, and what stays queued
	 * is logged as never sent when the connections close.
	 */
	ringtapd_begin_stop(d);
	return ret > 0 ? -EIO : ret;
}

void ringtapd_loop_stop(struct ringtapd *d)
{
	for (int cpu = 0; d->cpu_io && cpu < rt_pump_ncpus(d->pump); cpu++)
		sd_event_source_disable_unref(d->cpu_io[cpu]);
	free(d->cpu_io);
	d->cpu_io = NULL;
	d->drain_timer = sd_event_source_disable_unref(d->drain_timer);
	d->cpu_check_timer = sd_event_source_disable_unref(d->cpu_check_timer);
	d->duration_timer = sd_event_source_disable_unref(d->duration_timer);
	d->status_timer = sd_event_source_disable_unref(d->status_timer);
	d->loop = sd_event_unref(d->loop);
}
