// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ringtapd: options -> tracefs session -> layout -> per-CPU readers -> one
 * event loop that drains every CPU on a timer -> decoder -> output.
 */
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <event-parse.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <trace-seq.h>

#include "config.h"
#include "cpu_reader.h"
#include "decode.h"
#include "host.h"
#include "layout.h"
#include "log.h"
#include "nats.h"
#include "server.h"
#include "text.h"
#include "read_file.h"
#include "tracefs.h"
#include "util.h"

struct cpu_account {
	unsigned long long records, unknown;
	unsigned long long missed_exact;	/* counts the kernel stored in pages */
	unsigned long long missed_pages_inexact;	/* pages that said "lost some" only */
	unsigned long long malformed_pages;
};

struct ringtapd {
	const char *config_path;
	bool config_path_given;
	bool print_config;
	struct rt_config cli;		/* what the command line set: it beats the file */
	struct rt_config cfg;		/* in force: defaults, then the file, then cli */
	struct rt_session_opts opts;
	struct rt_server_opts server_opts;
	char **event_globs;
	char **nats_globs;		/* what is published; NULL: no NATS */
	bool to_stdout;
	bool once;
	unsigned int wait_subscribers;	/* read nothing until this many subscribed */
	unsigned int text_flags;
	unsigned int drain_ms;
	unsigned int max_pages_per_pass;
	uint64_t duration_us;

	struct rt_session *session;
	struct rt_layout *layout;
	struct rt_decoder *decoder;
	struct rt_server *server;
	struct rt_nats *nats;
	struct rt_host_id host_id;
	struct rt_cpu_reader *readers;
	struct cpu_account *acct;
	int ncpus;
	sd_event *loop;
	struct trace_seq line;
	FILE *out;
	bool stopping;		/* tracing is off; waiting for subscribers to take the rest */
	bool abandoned;		/* past the deadline: the rest became Lost reports */
	bool said_bye;		/* subscribers were sent the stream's last frame */
	uint64_t stop_deadline;
	uint64_t nats_deadline;		/* stopping: when unacknowledged publishes are given up */
	unsigned int status_sec;
	uint64_t status_records, status_at;	/* at the last STATUS= */
	bool *offline;			/* per CPU, as last seen */
	uint64_t next_cpu_check;
};

static void usage(FILE *f)
{
	fputs("Usage: ringtapd [OPTIONS]\n"
	      "Reads every CPU's ring buffer in a private tracefs instance, learns the event\n"
	      "layout from tracefs and decodes the events.\n\n"
	      "Serves subscribers on a Unix socket (systemd socket activation or its own),\n"
	      "or prints decoded records with --stdout.\n\n"
	      "  -c, --config=FILE       settings file (default " RT_CONFIG_DEFAULT_PATH ");\n"
	      "                          options given here override it\n"
	      "      --print-config      print the settings in force, as a config file, and exit\n"
	      "  -s, --socket=PATH       socket to bind without systemd\n"
	      "                          (default /run/ringtap/ringtapd.sock)\n"
	      "  -g, --group=NAME        members may subscribe (default ringtap; root always)\n"
	      "      --max-queue-kb=KB   per-subscriber queue before records drop (default 4096)\n"
	      "      --max-clients=N     subscribers at once (default 64)\n"
	      "      --max-events=N      events one subscription may select (default 1024)\n"
	      "      --status-sec=SEC    period of the STATUS= line systemd shows (default 5, 0: off)\n"
	      "      --nats-url=URL      also publish to NATS JetStream (see ringtapd.conf(5))\n"
	      "      --nats-events=LIST  system:event globs published (default: --events)\n"
	      "      --nats-stream=NAME  JetStream stream (default RINGTAP)\n"
	      "      --nats-max-pending=N  messages unacknowledged before records drop\n"
	      "                          (default 4096)\n"
	      "      --wait-subscribers=N  read nothing until N clients subscribed (tests,\n"
	      "                          replays of a captured tree)\n"
	      "  -e, --events=LIST       comma-separated system:event globs to enable from the\n"
	      "                          start (default with --stdout: ringtap_test:*)\n"
	      "  -i, --instance=NAME     tracefs instance name (default ringtap)\n"
	      "  -b, --buffer-kb=KB      per-CPU ring buffer size\n"
	      "  -C, --clock=NAME        trace clock (default: the kernel's)\n"
	      "  -t, --tracing-dir=DIR   read a tracefs tree at DIR as it is (e.g. a captured\n"
	      "                          fixture); implies no instance unless -i is given\n"
	      "      --stdout            print decoded records as text on standard output\n"
	      "      --common            with --stdout, add every common field\n"
	      "      --no-time           with --stdout, leave out timestamps\n"
	      "      --once              drain what the buffers hold, then exit\n"
	      "  -d, --duration=SEC      stop after SEC seconds\n"
	      "      --drain-ms=MS       drain period (default 50)\n"
	      "      --max-pages=N       pages taken from one CPU per pass (default 256)\n"
	      "  -h, --help              this text\n"
	      "  -V, --version           version\n",
	      f);
}

static int split_list(const char *csv, char ***out)
{
	size_t n = 0;
	char **list = NULL, *copy = strdup(csv), *save = NULL;

	if (!copy)
		return -ENOMEM;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char **nl = realloc(list, (n + 2) * sizeof(*list));

		if (!nl || !(nl[n] = strdup(tok))) {
			free(nl ? nl : list);
			free(copy);
			return -ENOMEM;
		}
		list = nl;
		list[++n] = NULL;
	}
	free(copy);
	*out = list;
	return n ? 0 : -EINVAL;
}

enum {
	OPT_STDOUT = 256,
	OPT_COMMON,
	OPT_NO_TIME,
	OPT_ONCE,
	OPT_WAIT_SUBSCRIBERS,
	OPT_PRINT_CONFIG,
	OPT_CONFIG_KEY,		/* any long option named after a config key */
};

static int parse_args(struct ringtapd *d, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "print-config", no_argument, NULL, OPT_PRINT_CONFIG },
		{ "events", required_argument, NULL, 'e' },
		{ "socket", required_argument, NULL, 's' },
		{ "group", required_argument, NULL, 'g' },
		{ "instance", required_argument, NULL, 'i' },
		{ "buffer-kb", required_argument, NULL, 'b' },
		{ "clock", required_argument, NULL, 'C' },
		{ "max-queue-kb", required_argument, NULL, OPT_CONFIG_KEY },
		{ "max-clients", required_argument, NULL, OPT_CONFIG_KEY },
		{ "max-events", required_argument, NULL, OPT_CONFIG_KEY },
		{ "drain-ms", required_argument, NULL, OPT_CONFIG_KEY },
		{ "max-pages", required_argument, NULL, OPT_CONFIG_KEY },
		{ "status-sec", required_argument, NULL, OPT_CONFIG_KEY },
		{ "listen-tcp", required_argument, NULL, OPT_CONFIG_KEY },
		{ "tls-cert", required_argument, NULL, OPT_CONFIG_KEY },
		{ "tls-key", required_argument, NULL, OPT_CONFIG_KEY },
		{ "tls-ca", required_argument, NULL, OPT_CONFIG_KEY },
		{ "tls-clients", required_argument, NULL, OPT_CONFIG_KEY },
		{ "tcp-insecure", required_argument, NULL, OPT_CONFIG_KEY },
		{ "nats-url", required_argument, NULL, OPT_CONFIG_KEY },
		{ "nats-events", required_argument, NULL, OPT_CONFIG_KEY },
		{ "nats-stream", required_argument, NULL, OPT_CONFIG_KEY },
		{ "nats-max-pending", required_argument, NULL, OPT_CONFIG_KEY },
		{ "wait-subscribers", required_argument, NULL, OPT_WAIT_SUBSCRIBERS },
		{ "tracing-dir", required_argument, NULL, 't' },
		{ "duration", required_argument, NULL, 'd' },
		{ "stdout", no_argument, NULL, OPT_STDOUT },
		{ "common", no_argument, NULL, OPT_COMMON },
		{ "no-time", no_argument, NULL, OPT_NO_TIME },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	static const struct { char opt; enum rt_config_key key; } short_keys[] = {
		{ 'e', RT_CONF_EVENTS }, { 's', RT_CONF_SOCKET }, { 'g', RT_CONF_GROUP },
		{ 'i', RT_CONF_INSTANCE }, { 'b', RT_CONF_BUFFER_KB }, { 'C', RT_CONF_CLOCK },
	};
	const char *why;
	int c, idx;

	d->config_path = RT_CONFIG_DEFAULT_PATH;
	rt_config_defaults(&d->cli);
	while ((c = getopt_long(argc, argv, "c:e:s:g:i:b:C:t:d:hV", longopts, &idx)) != -1) {
		int key = -1;

		switch (c) {
		case 'c':
			d->config_path = optarg;
			d->config_path_given = true;
			break;
		case OPT_PRINT_CONFIG:
			d->print_config = true;
			break;
		case OPT_CONFIG_KEY:
			key = rt_config_key_by_name(longopts[idx].name, strlen(longopts[idx].name));
			break;
		case OPT_WAIT_SUBSCRIBERS:
			d->wait_subscribers = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 't':
			d->opts.tracing_dir = optarg;
			break;
		case 'd':
			d->duration_us = (uint64_t)(strtod(optarg, NULL) * 1e6);
			break;
		case OPT_STDOUT:
			d->to_stdout = true;
			break;
		case OPT_COMMON:
			d->text_flags |= RT_TEXT_COMMON;
			break;
		case OPT_NO_TIME:
			d->text_flags |= RT_TEXT_NO_TIME;
			break;
		case OPT_ONCE:
			d->once = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("ringtapd %s\n", RINGTAP_VERSION);
			exit(0);
		default:
			for (size_t i = 0; i < sizeof(short_keys) / sizeof(short_keys[0]); i++)
				if (short_keys[i].opt == c)
					key = (int)short_keys[i].key;
			if (key < 0) {
				usage(stderr);
				return -EINVAL;
			}
		}
		if (key >= 0 && rt_config_set(&d->cli, (enum rt_config_key)key, optarg, &why)) {
			fprintf(stderr, "ringtapd: --%s=%s: %s\n",
				rt_config_key_name((enum rt_config_key)key), optarg, why);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ringtapd: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/* Defaults, then the file, then the command line, into *cfg. Logs what is wrong, once. */
static int load_config(struct ringtapd *d, struct rt_config *cfg)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	unsigned int line;
	const char *why;
	int ret;

	rt_config_defaults(cfg);
	ret = rt_read_file(d->config_path, 1 << 20, &text, &len);
	if (ret == -ENOENT && !d->config_path_given)
		return rt_config_merge(cfg, &d->cli);
	if (ret) {
		rt_log(LOG_ERR, "config %s: %s", d->config_path,
		       ret == -EFBIG ? "too large" : strerror(-ret));
		return ret;
	}
	ret = rt_config_parse(cfg, text, len, &line, &why);
	if (ret) {
		rt_log(LOG_ERR, "config %s:%u: %s", d->config_path, line, why);
		return ret;
	}
	return rt_config_merge(cfg, &d->cli);
}

/* Points the options of the session, the server and the loop at the settings in force. */
static int apply_startup_config(struct ringtapd *d)
{
	struct rt_config *cfg = &d->cfg;
	const char *events = cfg->str[RT_CONF_EVENTS];

	d->server_opts.socket_path = cfg->str[RT_CONF_SOCKET] ?: "/run/ringtap/ringtapd.sock";
	d->server_opts.group = cfg->str[RT_CONF_GROUP] ?: "ringtap";
	d->server_opts.max_queue = cfg->num[RT_CONF_MAX_QUEUE_KB] << 10;
	d->server_opts.max_clients = (unsigned int)cfg->num[RT_CONF_MAX_CLIENTS];
	d->server_opts.max_events = (unsigned int)cfg->num[RT_CONF_MAX_EVENTS];
	d->server_opts.tcp_listen = rt_config_str(cfg, RT_CONF_LISTEN_TCP);
	d->server_opts.tls_cert = rt_config_str(cfg, RT_CONF_TLS_CERT);
	d->server_opts.tls_key = rt_config_str(cfg, RT_CONF_TLS_KEY);
	d->server_opts.tls_ca = rt_config_str(cfg, RT_CONF_TLS_CA);
	d->server_opts.tls_clients = rt_config_str(cfg, RT_CONF_TLS_CLIENTS);
	d->server_opts.tcp_insecure = cfg->num[RT_CONF_TCP_INSECURE];
	/* A captured tree is read as it is, unless the command line names an instance. */
	if (!d->opts.tracing_dir)
		d->opts.instance_name = cfg->str[RT_CONF_INSTANCE] ?: "ringtap";
	else
		d->opts.instance_name = d->cli.str[RT_CONF_INSTANCE];
	d->opts.buffer_kb = cfg->num[RT_CONF_BUFFER_KB];
	d->opts.clock = cfg->str[RT_CONF_CLOCK];
	d->drain_ms = (unsigned int)cfg->num[RT_CONF_DRAIN_MS];
	d->max_pages_per_pass = (unsigned int)cfg->num[RT_CONF_MAX_PAGES];
	d->status_sec = (unsigned int)cfg->num[RT_CONF_STATUS_SEC];
	if (!events && d->to_stdout)
		events = "ringtap_test:*";
	if (events && split_list(events, &d->event_globs)) {
		rt_log(LOG_ERR, "bad events list '%s'", events);
		return -EINVAL;
	}
	if (!cfg->str[RT_CONF_NATS_URL])
		return 0;
	events = cfg->str[RT_CONF_NATS_EVENTS] ?: events;
	if (!events || split_list(events, &d->nats_globs)) {
		rt_log(LOG_ERR, "nats_url needs nats_events (or events): what to publish");
		return -EINVAL;
	}
	return 0;
}

static int on_record(const struct rt_record *rec, void *ctx)
{
	struct ringtapd *d = ctx;

	d->acct[rec->cpu].records++;
	if (!rec->event)
		d->acct[rec->cpu].unknown++;
	if (d->server)
		rt_server_record(d->server, rec);
	if (d->nats)
		rt_nats_record(d->nats, rec);
	if (!d->to_stdout)
		return 0;
	trace_seq_reset(&d->line);
	rt_record_text(&d->line, rec, d->layout, d->text_flags);
	trace_seq_terminate(&d->line);
	fputs(d->line.buffer, d->out);
	fputc('\n', d->out);
	return 0;
}

static int on_page(int cpu, const uint8_t *page, unsigned int len, void *ctx)
{
	struct ringtapd *d = ctx;
	struct cpu_account *a = &d->acct[cpu];
	struct rt_page_result res;
	bool walk = d->to_stdout || d->nats || (d->server && rt_server_wants_records(d->server));
	int ret;

	/* Raw subscribers alone take the page whole: it is checked and counted, not walked. */
	ret = rt_decode_page(d->decoder, (unsigned int)cpu, page, len, walk ? on_record : NULL, d,
			     &res);
	if (!walk && ret == 0)
		a->records += res.records;
	if (ret == -EBADMSG) {
		a->malformed_pages++;
		rt_log(LOG_WARNING, "cpu %d: malformed page skipped (%s)", cpu, res.error);
		if (d->to_stdout)
			fprintf(d->out, "# cpu %d: malformed page skipped (%s)\n", cpu, res.error);
		/* Its records are lost, how many is unknown: subscribers are told so. */
		if (d->server)
			rt_server_kernel_loss(d->server, (unsigned int)cpu, 0, false, 0);
		if (d->nats)
			rt_nats_kernel_loss(d->nats, (unsigned int)cpu, 0, false, 0);
	} else if (res.missed) {
		/* The kernel lost events before this page's first record. */
		if (res.missed_exact)
			a->missed_exact += res.missed_count;
		else
			a->missed_pages_inexact++;
		if (d->server)
			rt_server_kernel_loss(d->server, (unsigned int)cpu, res.missed_count,
					      res.missed_exact, res.timestamp);
		if (d->nats)
			rt_nats_kernel_loss(d->nats, (unsigned int)cpu, res.missed_count,
					    res.missed_exact, res.timestamp);
		if (d->to_stdout && res.missed_exact)
			fprintf(d->out, "# cpu %d: lost %" PRIu64 " events before %" PRIu64 "\n", cpu,
				res.missed_count, res.timestamp);
		else if (d->to_stdout)
			fprintf(d->out, "# cpu %d: lost events (count unknown) before %" PRIu64 "\n",
				cpu, res.timestamp);
	}
	if (d->server) {
		if (ret != -EBADMSG)
			rt_server_page(d->server, (unsigned int)cpu, page, len, res.records,
				       res.timestamp);
		rt_server_end_page(d->server);
	}
	if (d->nats)
		rt_nats_end_page(d->nats);
	return ret == -EBADMSG ? 0 : ret;
}

/* One pass over every CPU; returns the pages read, or -errno. */
static int drain_all(struct ringtapd *d, unsigned int max_pages)
{
	int total = 0;

	for (int cpu = 0; cpu < d->ncpus; cpu++) {
		int n = rt_cpu_reader_drain(&d->readers[cpu], max_pages, on_page, d);

		if (n < 0) {
			rt_log(LOG_ERR, "reading cpu%d: %s", cpu, strerror(-n));
			return n;
		}
		total += n;
	}
	fflush(d->out);
	return total;
}

static bool all_eof(const struct ringtapd *d)
{
	for (int cpu = 0; cpu < d->ncpus; cpu++)
		if (!d->readers[cpu].eof)
			return false;
	return true;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/*
 * Stopping: tracing off, everything the kernel holds read, then up to two
 * seconds for subscribers to take what is queued for them; then what a slow
 * one still has queued is dropped and reported to it, with one more second
 * for that report. JetStream gets five seconds for its acknowledgments and
 * the loss reports owed: a server that is away for good is not waited for.
 */
#define NATS_STOP_GRACE_US (5 * 1000000ULL)

static void begin_stop(struct ringtapd *d)
{
	if (d->stopping)
		return;
	d->stopping = true;
	sd_notify(0, "STOPPING=1");
	rt_session_stop(d->session);
	drain_all(d, 0);
	d->stop_deadline = now_us() + 2000000;
	d->nats_deadline = now_us() + NATS_STOP_GRACE_US;
}

/*
 * Once a second: a CPU that went offline keeps its buffer, which is still
 * read, so nothing is lost; its subscribers are told, so that a quiet CPU
 * and an offline one do not look the same.
 */
static void check_cpus(struct ringtapd *d)
{
	uint64_t now = now_us();

	if (!d->offline || d->opts.tracing_dir || now < d->next_cpu_check)
		return;
	d->next_cpu_check = now + 1000000;
	for (int cpu = 0; cpu < d->ncpus; cpu++) {
		int online = rt_cpu_online(cpu);

		if (online < 0 || d->offline[cpu] == !online)
			continue;
		d->offline[cpu] = !online;
		rt_log(LOG_NOTICE, "cpu%d went %s; its buffer is still read", cpu,
		       online ? "online" : "offline");
		if (d->server)
			rt_server_cpu_state(d->server, (unsigned int)cpu, online);
	}
}

static int on_drain_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct ringtapd *d = userdata;
	uint64_t next_us = d->drain_ms * 1000ULL;
	int n;

	if (d->nats)
		rt_nats_poll(d->nats);
	if (d->stopping) {
		bool nats_done = !d->nats || rt_nats_drained(d->nats) || now_us() > d->nats_deadline;

		if (!d->server && nats_done)
			return sd_event_exit(d->loop, 0);
		if (!d->server) {
			next_us = 10000;
		} else if (rt_server_drained(d->server)) {
			if (d->said_bye && nats_done)
				return sd_event_exit(d->loop, 0);
			if (d->said_bye)
				goto rearm;
			/* Everything, losses included, is out: the Bye says so. */
			rt_server_say_bye(d->server);
			d->said_bye = true;
		} else if (now_us() > d->stop_deadline) {
			if (d->abandoned && nats_done)
				return sd_event_exit(d->loop, 0);
			if (d->abandoned)
				goto rearm;
			/* Too slow for the grace: what it did not take is reported lost. */
			rt_server_abandon(d->server);
			rt_server_say_bye(d->server);
			d->said_bye = true;
			d->abandoned = true;
			d->stop_deadline = now_us() + 1000000;
		}
		next_us = 10000;
	} else if (d->server && rt_server_subscribers(d->server) < d->wait_subscribers) {
		next_us = 10000;
	} else {
		d->wait_subscribers = 0;	/* once reached, later departures do not pause us */
		check_cpus(d);
		n = drain_all(d, d->max_pages_per_pass);
		if (n < 0)
			return sd_event_exit(d->loop, 1);
		if (d->once && (n == 0 || all_eof(d))) {
			begin_stop(d);
			next_us = 0;
		} else if (n >= (int)(d->max_pages_per_pass * d->ncpus)) {
			/* Pages left behind by the per-pass cap: come back at once. */
			next_us = 0;
		}
	}
rearm:
	return sd_event_source_set_time_relative(s, next_us) ?:
	       sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static int on_stop_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	begin_stop(userdata);
	return 0;
}

static int on_duration(sd_event_source *s, uint64_t usec, void *userdata)
{
	begin_stop(userdata);
	return 0;
}

/*
 * SIGHUP: reads the file again. What a running daemon can take (limits, the
 * drain period, the buffer size, events added) is applied without touching
 * a subscriber; a change that needs a restart is logged and left alone.
 */
static int on_reload(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct ringtapd *d = userdata;
	struct rt_config next;
	unsigned int changed = 0, deferred = 0;

	sd_notify(0, "RELOADING=1");
	if (load_config(d, &next)) {
		rt_log(LOG_ERR, "reload: configuration not changed");
		rt_config_release(&next);
		sd_notify(0, "READY=1");
		return 0;
	}
	for (int k = 0; k < RT_CONF_N_KEYS; k++) {
		enum rt_config_key key = (enum rt_config_key)k;
		char was[32], now[32];

		if (rt_config_equal(&d->cfg, &next, key))
			continue;
		if (!rt_config_key_reloadable(key)) {
			rt_log(LOG_NOTICE, "reload: %s changed to '%s': takes effect on restart",
			       rt_config_key_name(key), rt_config_value(&next, key, now, sizeof(now)));
			deferred++;
			continue;
		}
		rt_log(LOG_INFO, "reload: %s '%s' -> '%s'", rt_config_key_name(key),
		       rt_config_value(&d->cfg, key, was, sizeof(was)),
		       rt_config_value(&next, key, now, sizeof(now)));
		changed++;
	}
	if (!rt_config_equal(&d->cfg, &next, RT_CONF_BUFFER_KB) && next.num[RT_CONF_BUFFER_KB]) {
		int ret = rt_session_set_buffer_kb(d->session, next.num[RT_CONF_BUFFER_KB]);

		if (ret)
			rt_log(LOG_ERR, "reload: buffer_kb: %s", strerror(-ret));
		else
			rt_log(LOG_INFO, "reload: buffers are now %zu KiB per CPU", d->session->buffer_kb);
	}
	if (!rt_config_equal(&d->cfg, &next, RT_CONF_EVENTS) && next.str[RT_CONF_EVENTS]) {
		char **globs = NULL;
		const char *why = "";
		int ret = split_list(next.str[RT_CONF_EVENTS], &globs);

		if (!ret)
			ret = rt_session_enable(d->session, d->layout, (const char *const *)globs, 0, &why);
		if (ret < 0)
			rt_log(LOG_ERR, "reload: events: %s: %s", why, strerror(-ret));
		rt_strv_free(globs);
	}
	d->drain_ms = (unsigned int)next.num[RT_CONF_DRAIN_MS];
	d->max_pages_per_pass = (unsigned int)next.num[RT_CONF_MAX_PAGES];
	d->status_sec = (unsigned int)next.num[RT_CONF_STATUS_SEC];
	/* Revoking a certificate's access must not wait for a restart. */
	if (d->server)
		rt_server_reload_clients(d->server);
	if (d->server)
		rt_server_set_limits(d->server, next.num[RT_CONF_MAX_QUEUE_KB] << 10,
				     (unsigned int)next.num[RT_CONF_MAX_CLIENTS],
				     (unsigned int)next.num[RT_CONF_MAX_EVENTS]);
	/* The session, the server and the readers keep pointers into the strings in force. */
	for (int k = 0; k < RT_CONF_N_KEYS; k++)
		if (rt_config_key_reloadable((enum rt_config_key)k))
			d->cfg.num[k] = next.num[k];
	free(d->cfg.str[RT_CONF_EVENTS]);
	d->cfg.str[RT_CONF_EVENTS] = next.str[RT_CONF_EVENTS];
	next.str[RT_CONF_EVENTS] = NULL;
	rt_config_release(&next);
	rt_log(LOG_INFO, "reloaded %s: %u setting(s) applied, %u waiting for a restart",
	       d->config_path, changed, deferred);
	sd_notify(0, "READY=1");
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
		 "(buffer full) + %" PRIu64 " failed, %" PRIu64 " messages unacknowledged",
		 st.records - st.failed, st.dropped, st.failed, st.pending);
}

/* STATUS= for systemctl status: who is served, how fast, what was lost. */
static int on_status_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct ringtapd *d = userdata;
	uint64_t records = 0, kernel_lost = 0, inexact = 0, t = now_us();
	char nats[160];
	double rate;

	for (int cpu = 0; cpu < d->ncpus; cpu++) {
		records += d->acct[cpu].records;
		kernel_lost += d->acct[cpu].missed_exact;
		inexact += d->acct[cpu].missed_pages_inexact + d->acct[cpu].malformed_pages;
	}
	rate = d->status_at && t > d->status_at ?
		       (double)(records - d->status_records) * 1e6 / (double)(t - d->status_at) : 0;
	d->status_records = records;
	d->status_at = t;
	nats_status(d, nats, sizeof(nats));
	sd_notifyf(0, "STATUS=%u subscriber(s), %.0f events/s, %" PRIu64 " events read; lost: %" PRIu64
		   " in the kernel (+%" PRIu64 " pages uncounted), %" PRIu64 " by slow subscribers%s",
		   d->server ? rt_server_subscribers(d->server) : 0, rate, records, kernel_lost, inexact,
		   d->server ? rt_server_dropped(d->server) : 0, nats);
	if (!d->status_sec)
		return sd_event_source_set_enabled(s, SD_EVENT_OFF);
	return sd_event_source_set_time_relative(s, d->status_sec * 1000000ULL) ?:
	       sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static void report(struct ringtapd *d)
{
	char nats[160];

	nats_status(d, nats, sizeof(nats));
	if (*nats)
		rt_log(LOG_INFO, "%s", nats + 2);
	for (int cpu = 0; cpu < d->ncpus; cpu++) {
		struct cpu_account *a = &d->acct[cpu];
		struct rt_cpu_stats st = { 0 };

		rt_session_cpu_stats(d->session, cpu, &st);
		rt_log(LOG_INFO,
		       "cpu%d: %llu pages, %llu records, %llu unknown, lost %llu counted + %llu pages "
		       "uncounted, %llu malformed pages; kernel: overrun %llu, commit_overrun %llu, "
		       "dropped %llu",
			cpu, d->readers[cpu].pages, a->records, a->unknown, a->missed_exact, a->missed_pages_inexact,
			a->malformed_pages, st.overrun, st.commit_overrun, st.dropped_events);
	}
}

/*
 * After setup the daemon needs no privilege but CAP_SYSLOG (kernel
 * addresses in /proc/kallsyms): tracefs files and instances are root's, and
 * the socket is bound. Everything else goes, for good: bounding and ambient
 * sets, then permitted and effective, and no_new_privs. Under systemd the
 * unit has taken the rest already.
 */
static int keep_only_cap_syslog(void)
{
	struct __user_cap_header_struct head = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { { 0 } };

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

		data[i].permitted &= keep;
		data[i].effective &= keep;
		data[i].inheritable = 0;
	}
	if (syscall(SYS_capset, &head, data))
		return -errno;
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ? -errno : 0;
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
	       d->session->clock ? d->session->clock : "?", d->session->ncpus);
}

static int run(struct ringtapd *d)
{
	__attribute__((cleanup(sd_event_source_unrefp))) sd_event_source *timer = NULL, *stop = NULL,
								   *status = NULL;
	const char *why = "";
	int ret;

	ret = rt_session_open(&d->session, &d->opts, &why);
	if (ret) {
		rt_log(LOG_ERR, "tracefs: %s: %s", why, strerror(-ret));
		return ret;
	}
	if (d->session->reclaimed)
		rt_log(LOG_WARNING, "removed a stale instance left by an earlier run");
	ret = rt_session_layout(d->session, &d->layout, &why);
	if (ret) {
		rt_log(LOG_ERR, "layout: %s: %s", why, strerror(-ret));
		return ret;
	}
	log_layout(d);
	ret = d->event_globs ? rt_session_enable(d->session, d->layout,
						 (const char *const *)d->event_globs, 0, &why) : 0;
	if (ret < 0) {
		rt_log(LOG_ERR, "enabling events: %s: %s", why, strerror(-ret));
		return ret;
	}
	ret = d->nats_globs ? rt_session_enable(d->session, d->layout,
						(const char *const *)d->nats_globs, 0, &why) : 0;
	if (ret < 0) {
		rt_log(LOG_ERR, "enabling nats_events: %s: %s", why, strerror(-ret));
		return ret;
	}
	ret = rt_session_symbols(d->session, d->layout);
	if (ret < 0)
		rt_log(LOG_WARNING, "kernel symbols: %s; pointers stay addresses",
			strerror(-ret));
	else if (ret > 0)
		rt_log(LOG_INFO, "%d kernel symbols loaded for pointer fields", ret);
	ret = rt_decoder_new(&d->decoder, d->layout);
	if (ret)
		return ret;
	d->ncpus = d->session->ncpus;
	d->readers = calloc(d->ncpus, sizeof(*d->readers));
	d->acct = calloc(d->ncpus, sizeof(*d->acct));
	d->offline = calloc(d->ncpus, sizeof(*d->offline));
	if (!d->readers || !d->acct || !d->offline)
		return -ENOMEM;
	for (int cpu = 0; cpu < d->ncpus; cpu++)
		d->offline[cpu] = rt_cpu_online(cpu) == 0;
	for (int cpu = 0; cpu < d->ncpus; cpu++) {
		ret = rt_cpu_reader_open(&d->readers[cpu], d->session, cpu,
					 d->layout->sub_buffer_size);
		if (ret) {
			rt_log(LOG_ERR, "opening cpu%d's trace_pipe_raw: %s", cpu,
				strerror(-ret));
			return ret;
		}
	}
	ret = sd_event_default(&d->loop);
	if (ret < 0)
		return ret;
	if ((ret = sd_event_add_signal(d->loop, NULL, SIGINT, on_stop_signal, d)) < 0 ||
	    (ret = sd_event_add_signal(d->loop, NULL, SIGTERM, on_stop_signal, d)) < 0 ||
	    (ret = sd_event_add_signal(d->loop, NULL, SIGHUP, on_reload, d)) < 0 ||
	    /* WATCHDOG=1 from the loop itself: a stuck drain stops the pings. */
	    (ret = sd_event_set_watchdog(d->loop, true)) < 0 ||
	    (ret = sd_event_add_time_relative(d->loop, &timer, CLOCK_MONOTONIC, 0, 1000,
					      on_drain_timer, d)) < 0)
		return ret;
	if (!d->to_stdout) {
		ret = rt_server_new(&d->server, d->loop, &d->server_opts, d->session, d->layout);
		if (ret < 0)
			return ret;
	}
	if (d->nats_globs) {
		struct rt_nats_opts no = {
			.url = d->cfg.str[RT_CONF_NATS_URL],
			.stream = d->cfg.str[RT_CONF_NATS_STREAM] ?: "RINGTAP",
			.events = (const char *const *)d->nats_globs,
			.max_pending = d->cfg.num[RT_CONF_NATS_MAX_PENDING],
		};

		rt_host_id_read(&d->host_id, d->session);
		ret = rt_nats_new(&d->nats, &no, &d->host_id.host, d->layout, (unsigned int)d->ncpus);
		if (ret < 0)
			return ret;
	}
	if (d->duration_us &&
	    (ret = sd_event_add_time_relative(d->loop, &stop, CLOCK_MONOTONIC, d->duration_us,
					      1000, on_duration, d)) < 0)
		return ret;
	ret = rt_session_start(d->session);
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
	rt_log(LOG_NOTICE, "tracing %zu event(s) on %d CPUs", d->session->n_events, d->ncpus);
	sd_notify(0, "READY=1");
	if (d->status_sec &&
	    (ret = sd_event_add_time_relative(d->loop, &status, CLOCK_MONOTONIC, 1000000, 100000,
					      on_status_timer, d)) < 0)
		return ret;
	ret = sd_event_loop(d->loop);
	begin_stop(d);	/* no-op unless the loop ended on an error */
	report(d);
	return ret > 0 ? -EIO : ret;
}

static void teardown(struct ringtapd *d)
{
	for (int cpu = 0; d->readers && cpu < d->ncpus; cpu++)
		rt_cpu_reader_close(&d->readers[cpu]);
	free(d->readers);
	free(d->acct);
	free(d->offline);
	rt_server_free(d->server);
	rt_nats_free(d->nats);
	rt_decoder_free(d->decoder);
	rt_layout_free(d->layout);
	rt_session_close(d->session);
	sd_event_unref(d->loop);
	trace_seq_destroy(&d->line);
	rt_strv_free(d->event_globs);
	rt_strv_free(d->nats_globs);
	rt_config_release(&d->cfg);
	rt_config_release(&d->cli);
}

int main(int argc, char **argv)
{
	struct ringtapd d = { .out = stdout };
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

	trace_seq_init(&d.line);
	ret = parse_args(&d, argc, argv);
	if (!ret)
		ret = load_config(&d, &d.cfg);
	if (!ret && d.print_config) {
		rt_config_write(&d.cfg, stdout);
		teardown(&d);
		return 0;
	}
	if (!ret)
		ret = apply_startup_config(&d);
	if (!ret)
		ret = run(&d);
	teardown(&d);
	return ret ? 1 : 0;
}
