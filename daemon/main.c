// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ringtapd: the order in which the modules start, and stop in reverse.
 *
 *   settings   the command line over /etc/ringtap/ringtapd.conf (settings.c)
 *   handover   what a restart kept in systemd's fd store, taken back (handover.c)
 *   session    our tracefs instance, its buffers and clock (tracefs.c): adopted
 *              after a restart
 *   layout     header_page, header_event, formats (layout.c)
 *   events     the configured ones switched on (select.c, tracefs.c)
 *   pump       a reader per CPU and the page decoder (pump.c)
 *   loop       signals, the drain timer, STATUS= (loop.c, reload.c)
 *   server     the Unix socket and TCP listener, subscribers (server.c)
 *   handover   the subscribers a restart kept, served again
 *   nats       the JetStream publisher, when configured (nats.c)
 *   tracing on, privileges dropped, READY=1, the loop runs until the stop
 *
 * Each step that fails says why in one log line, here or in its module.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <systemd/sd-daemon.h>

#include "handover.h"
#include "layout.h"
#include "log.h"
#include "nats.h"
#include "pump.h"
#include "ringtapd.h"
#include "util.h"

/*
 * After setup the daemon needs no privilege but CAP_SYSLOG (kernel
 * addresses in /proc/kallsyms): tracefs files and instances are root's, and
 * the socket is bound. Everything else goes, for good: no_new_privs first
 * (it needs no privilege, so nothing below can keep it from being set),
 * then the bounding and ambient sets, then permitted, effective and
 * inheritable. The unit has left nothing but CAP_SYSLOG already, and its
 * system call filter refuses capset() (@privileged): capset() is called
 * only when a set still holds more, so under the unit it is not called.
 */
static int keep_only_cap_syslog(void)
{
	struct __user_cap_header_struct head = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { { 0 } };
	bool more = false;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	for (int cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++)
		if (cap != CAP_SYSLOG && prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1 &&
		    prctl(PR_CAPBSET_DROP, cap, 0, 0, 0))
			return -errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return -errno;
	if (syscall(SYS_capget, &head, data))
		return -errno;
	for (unsigned int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
		uint32_t keep = i == CAP_TO_INDEX(CAP_SYSLOG) ? CAP_TO_MASK(CAP_SYSLOG) : 0;

		more |= (data[i].permitted | data[i].effective) & ~keep || data[i].inheritable;
		data[i].permitted &= keep;
		data[i].effective &= keep;
		data[i].inheritable = 0;
	}
	return more && syscall(SYS_capset, &head, data) ? -errno : 0;
}

/* The one line that says what this kernel's events look like. */
static void log_layout(const struct ringtapd *d)
{
	const struct rt_layout *l = d->layout;
	char fields[512];
	size_t off = 0;

	fields[0] = '\0';
	for (unsigned int i = 0; i < l->n_common && off < sizeof(fields); i++)
		off += (size_t)snprintf(fields + off, sizeof(fields) - off, "%s%s", i ? "," : "",
					l->common[i].name);
	rt_log(LOG_NOTICE, "trace_entry: %u bytes, common fields %s; sub-buffer %u bytes, long %u, "
	       "clock %s, %d CPUs", l->common_size, fields, l->sub_buffer_size, l->long_size,
	       rt_session_clock(d->session) ?: "?", rt_session_ncpus(d->session));
}

static int start_session(struct ringtapd *d)
{
	struct rt_why why = { "" };
	int ret;

	ringtapd_adopt_begin(d);
	ret = rt_session_open(&d->session, &d->opts, &why);
	if (ret) {
		rt_log(LOG_ERR, "tracefs: %s: %s", why.text, strerror(-ret));
		return ret;
	}
	ringtapd_adopt_trace_fds(d);
	if (rt_session_reclaimed(d->session))
		rt_log(LOG_WARNING, "removed a stale instance left by an earlier run");
	/* Warned, not refused: a tree or machine with a hole still has its first CPUs to read. */
	if (rt_session_cpu_gap(d->session) >= 0)
		rt_log(LOG_WARNING, "%s has no per_cpu/cpu%d: reading cpu0 to cpu%d only, not the "
		       "CPUs after it", d->opts.tracing_dir ?: "the instance",
		       rt_session_cpu_gap(d->session), rt_session_ncpus(d->session) - 1);
	/* Before any thread of ours starts: event-fork then covers them. */
	if (!d->cfg.num[RT_CONF_TRACE_SELF] && (ret = rt_session_exclude_self(d->session)))
		rt_log(LOG_WARNING, "leaving ringtapd out of its trace: %s; it traces itself",
		       strerror(-ret));
	ret = rt_session_layout(d->session, &d->layout, &why);
	if (ret) {
		rt_log(LOG_ERR, "layout: %s: %s", why.text, strerror(-ret));
		return ret;
	}
	log_layout(d);
	return 0;
}

/* A glob that matched nothing says all in its reason; errno's text (ENOENT) adds nothing. */
static void log_enable_error(const char *what, const struct rt_why *why, int ret)
{
	if (ret == -ENOENT && !strncmp(why->text, "no event matches", 16))
		rt_log(LOG_ERR, "%s%s", what, why->text);
	else
		rt_log(LOG_ERR, "%senabling events: %s: %s", what, why->text, strerror(-ret));
}

static int enable_events(struct ringtapd *d)
{
	struct rt_why why = { "" };
	int ret = 0;

	if (d->event_globs)
		ret = rt_session_enable_globs(d->session, d->layout,
					      (const char *const *)d->event_globs, &why);
	if (ret < 0) {
		log_enable_error("", &why, ret);
		return ret;
	}
	if (d->nats_globs)
		ret = rt_session_enable_globs(d->session, d->layout,
					      (const char *const *)d->nats_globs, &why);
	if (ret < 0) {
		log_enable_error("nats_events: ", &why, ret);
		return ret;
	}
	ret = rt_session_symbols(d->session, d->layout);
	if (ret < 0)
		rt_log(LOG_WARNING, "kernel symbols: %s; pointers stay addresses", strerror(-ret));
	else if (ret > 0)
		rt_log(LOG_INFO, "%d kernel symbols loaded for pointer fields", ret);
	return 0;
}

static int start_pump(struct ringtapd *d)
{
	struct rt_why why = { "" };
	int ring_fd = d->opts.adopt ? rt_fdstore_take_ring(&d->store) : -1;
	int ret = rt_pump_new(&d->pump, d->session, d->layout, d->cfg.num[RT_CONF_RING_PAGES],
			      ring_fd, &why);

	if (ring_fd >= 0)
		close(ring_fd);
	if (ret)
		rt_log(LOG_ERR, "%s: %s", why.text, strerror(-ret));
	return ret;
}

static int start_nats(struct ringtapd *d)
{
	struct rt_nats_opts no = {
		.url = d->cfg.str[RT_CONF_NATS_URL],
		.stream = rt_config_str(&d->cfg, RT_CONF_NATS_STREAM),
		.events = (const char *const *)d->nats_globs,
		.max_pending = d->cfg.num[RT_CONF_NATS_MAX_PENDING],
		.max_message_kb = d->cfg.num[RT_CONF_NATS_MAX_MESSAGE_KB],
	};
	struct rt_publisher_from from;
	struct rt_pub_place *places = NULL;
	int ret;

	if (!d->nats_globs)
		return 0;
	rt_host_id_read(&d->host_id, d->session);
	no.mark = ringtapd_nats_mark(d, &from, &places);
	no.from = places ? &from : NULL;
	no.mark_key = ringtapd_nats_key(d);
	/* Says why itself when it fails. */
	ret = rt_nats_new(&d->nats, &no, &d->host_id.host, d->layout,
			  (unsigned int)rt_session_ncpus(d->session));
	if (!ret && places)
		ringtapd_nats_republish(d, places);
	free(places);
	return ret;
}

/*
 * CLOCK_MONOTONIC when this process began: the kernel's start time (the
 * fork; under systemd its sandbox is set up between that and the exec),
 * in clock ticks.
 */
static uint64_t fork_monotonic_ns(void)
{
	char buf[1024], *p;
	unsigned long long ticks = 0;
	struct timespec boot, mono;
	long hz = sysconf(_SC_CLK_TCK);
	ssize_t n;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || hz <= 0)
		return 0;
	buf[n] = '\0';
	/* Field 22, counted after the command's closing parenthesis (field 2). */
	p = strrchr(buf, ')');
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", &ticks) != 1)
		return 0;
	clock_gettime(CLOCK_BOOTTIME, &boot);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	/* The boot clock counts suspend too; the gap between the two is taken off. */
	return (uint64_t)ticks * (1000000000ULL / (uint64_t)hz) -
	       ((uint64_t)boot.tv_sec * 1000000000ULL + (uint64_t)boot.tv_nsec) +
	       ((uint64_t)mono.tv_sec * 1000000000ULL + (uint64_t)mono.tv_nsec);
}

/* Where a start's time went: a restart's silence is mostly this (ringtapd(8), RESTARTS). */
static void log_start_times(const struct ringtapd *d)
{
	static const char *const names[START_STEPS] = {
		"fork to main() (the sandbox, exec, libraries)", "settings", "instance and layout", "events", "ring",
		"socket and subscribers",
	};
	uint64_t now = rt_monotonic_ns(), prev = d->forked_ns ?: d->start_ns[START_MAIN];
	char text[512];
	size_t len = 0;

	for (int i = d->forked_ns ? 0 : 1; i < START_STEPS && len < sizeof(text); i++) {
		uint64_t at = d->start_ns[i] ?: prev;

		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s %" PRIu64, len ? ", " : "",
					names[i], (at - prev) / 1000000);
		prev = at;
	}
	if (len < sizeof(text))
		snprintf(text + len, sizeof(text) - len, ", tracing on %" PRIu64, (now - prev) / 1000000);
	rt_log(LOG_INFO, "ready %" PRIu64 " ms after the fork (ms: %s)",
	       (now - (d->forked_ns ?: d->start_ns[START_MAIN])) / 1000000, text);
}

static int start_tracing(struct ringtapd *d)
{
	int ret = rt_session_start(d->session);
	struct rt_session_costs costs = rt_session_costs(d->session);

	if (ret) {
		rt_log(LOG_ERR, "turning tracing on: %s", strerror(-ret));
		return ret;
	}
	/* A captured tree is read with whatever the caller has (sanitizers trace us). */
	if (!d->opts.tracing_dir) {
		ret = keep_only_cap_syslog();
		if (ret)
			rt_log(LOG_WARNING, "dropping capabilities: %s; running with what we have",
			       strerror(-ret));
	}
	rt_log(LOG_NOTICE, "tracing %zu event(s) on %d CPUs (formats read in %" PRIu64 " ms; "
	       "%u tracefs write(s) switched them on in %" PRIu64 " ms)", costs.n_events,
	       rt_session_ncpus(d->session), costs.learn_ns / 1000000, costs.enable_writes,
	       costs.switch_ns / 1000000);
	sd_notify(0, "READY=1");
	log_start_times(d);
	return 0;
}

static int run(struct ringtapd *d)
{
	int ret;

	ringtapd_status_init(d);
	if ((ret = start_session(d)))
		return ret;
	d->start_ns[START_INSTANCE] = rt_monotonic_ns();
	if ((ret = enable_events(d)))
		return ret;
	d->start_ns[START_EVENTS] = rt_monotonic_ns();
	if ((ret = start_pump(d)) || (ret = ringtapd_loop_start(d)))
		return ret;
	d->start_ns[START_RING] = rt_monotonic_ns();
	/* Resume tokens: the previous ringtapd's secret when it left one, else a new one. */
	if (!d->have_secret && (ret = rt_token_secret_new(&d->secret)) < 0) {
		rt_log(LOG_ERR, "no random bytes for resume tokens: %s", strerror(-ret));
		return ret;
	}
	d->have_secret = true;
	d->server_opts.resume_secret = &d->secret;
	if (!d->to_stdout && (ret = rt_server_new(&d->server, d->loop, &d->server_opts,
						  d->session, d->layout)))
		return ret;
	if (d->server)
		rt_server_set_ring(d->server, rt_pump_ring(d->pump));
	ringtapd_adopt_end(d);
	ringtapd_arm_store(d);
	if ((ret = start_nats(d)))
		return ret;
	ringtapd_arm_nats(d);
	d->start_ns[START_SUBSCRIBERS] = rt_monotonic_ns();
	rt_pump_set_sinks(d->pump, &(struct rt_pump_sinks){
		.server = d->server,
		.nats = d->nats,
		.text = d->to_stdout ? stdout : NULL,
		.text_flags = d->text_flags,
	});
	if ((ret = start_tracing(d)))
		return ret;
	ret = ringtapd_loop_run(d);
	ringtapd_report(d);
	return ret;
}

/* In reverse: what a failed start left half done is undone the same way. */
static void teardown(struct ringtapd *d)
{
	int ret;

	rt_nats_free(d->nats);
	if (d->nats_mark_fd >= 0)
		close(d->nats_mark_fd);
	rt_server_free(d->server);
	ringtapd_loop_stop(d);
	rt_pump_free(d->pump);
	rt_layout_free(d->layout);
	/* What a failed start took back from the fd store is given up. */
	rt_fdstore_release(&d->store);
	rt_state_release(&d->state);
	free(d->state_bytes);
	/* Out of the store before the instance goes: a stored trace fd keeps it busy. */
	ringtapd_disarm_store(d);
	OPENSSL_cleanse(&d->secret, sizeof(d->secret));
	if ((ret = rt_session_close(d->session)))
		rt_log(LOG_WARNING, "cannot remove the tracefs instance: %s", strerror(-ret));
	ringtapd_release_settings(d);
}

int main(int argc, char **argv)
{
	struct ringtapd d = { .nats_mark_fd = -1 };
	sigset_t mask;
	int ret;

	/*
	 * Block the stop signals first: one that arrives during setup then waits
	 * for the loop (which stops at once and cleans up) instead of killing us
	 * with the instance left behind, or being lost where it was ignored.
	 */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	/*
	 * OpenSSL writes to TLS clients with write(), not send(MSG_NOSIGNAL): a
	 * client that vanished must be an EPIPE, not the daemon's death.
	 */
	signal(SIGPIPE, SIG_IGN);
	/*
	 * Every pass queues a few hundred KiB of frames and frees them once
	 * written: with glibc's default 128 KiB trim threshold the heap shrank
	 * and faulted back in on every pass (a fifth of the daemon's CPU on a
	 * raw stream, measured with perf in the guest). Up to 4 MiB stays.
	 * Setting it also freezes the mmap threshold at 128 KiB: frames of
	 * larger sub-buffers would each be mapped and unmapped, so it is set
	 * above any frame.
	 */
	mallopt(M_TRIM_THRESHOLD, 4 << 20);
	mallopt(M_MMAP_THRESHOLD, 1 << 20);

	d.start_ns[START_MAIN] = rt_monotonic_ns();
	d.forked_ns = fork_monotonic_ns();
	ret = ringtapd_parse_args(&d, argc, argv);
	if (!ret && !d.exit_now)
		ret = ringtapd_load_config(&d, &d.cfg);
	if (!ret && !d.exit_now && d.print_config) {
		rt_config_write(&d.cfg, stdout);
		d.exit_now = true;
	}
	if (!ret && !d.exit_now)
		ret = ringtapd_apply_settings(&d);
	d.start_ns[START_SETTINGS] = rt_monotonic_ns();
	if (!ret && !d.exit_now)
		ret = run(&d);
	teardown(&d);
	return ret ? 1 : 0;
}
