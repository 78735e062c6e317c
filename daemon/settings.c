// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What ringtapd is told to do: the command line, over /etc/ringtap/ringtapd.conf,
 * over the defaults (config.c owns the keys), turned into the options of
 * the session, the server and the loop.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "read_file.h"
#include "ringtapd.h"
#include "text.h"
#include "util.h"

/* How this binary was built, when not as the project builds it (an upgrade test's: --version). */
#ifndef RINGTAP_BUILD
#define RINGTAP_BUILD ""
#endif

/* The defaults it names come from config.c's key table. */
static void usage(FILE *f)
{
	fprintf(f,
	"Usage: ringtapd [OPTIONS]\n"
	"Reads every CPU's ring buffer in a private tracefs instance, learns the event\n"
	"layout from tracefs and decodes the events.\n\n"
	"Serves subscribers on a Unix socket (systemd socket activation or its own),\n"
	"or prints decoded records with --stdout.\n\n"
	"  -c, --config=FILE       settings file (default " RT_CONFIG_DEFAULT_PATH ");\n"
	"                          options given here override it\n"
	"      --print-config      print the settings in force, as a config file, and exit\n"
	"  -s, --socket=PATH       socket to bind without systemd\n"
	"                          (default %s)\n"
	"  -g, --group=NAME        members may subscribe (default %s; root always)\n"
	"      --max-queue-kb=KB   per-subscriber queue before records drop (default %lu)\n"
	"      --max-clients=N     subscribers at once (default %lu)\n"
	"      --max-events=N      events one subscription may select (default %lu)\n"
	"      --max-clients-per-peer=N  subscribers of one uid or certificate\n"
	"                          (default %lu: half of --max-clients)\n"
	"      --max-pending-per-peer=N  connections of one peer before their Hello\n"
	"                          (default %lu)\n"
	"      --status-sec=SEC    period of the STATUS= line systemd shows (default %lu, 0: off)\n"
	"      --nats-url=URL      also publish to NATS JetStream (see ringtapd.conf(5))\n"
	"      --nats-events=LIST  system:event globs published (default: --events)\n"
	"      --nats-stream=NAME  JetStream stream (default %s)\n"
	"      --nats-max-pending=N  messages unacknowledged before records drop\n"
	"      --nats-max-message-kb=N  a drain's pages of a CPU in one message per\n"
	"                          event up to N KiB (default 0: a page a message)\n"
	"                          (default %lu)\n"
	"      --wait-subscribers=N  read nothing until N clients subscribed (tests,\n"
	"                          replays of a captured tree)\n"
	"  -e, --events=LIST       comma-separated system:event globs to enable from the\n"
	"                          start (default with --stdout: " RT_CONFIG_STDOUT_EVENTS ")\n"
	"  -i, --instance=NAME     tracefs instance name (default %s)\n"
	"      --trace-self=0|1    1: trace ringtapd's own threads too (default %lu)\n"
	"      --kernel-selection=0|1  0: subscribers' filters and pids in ringtapd only,\n"
	"                          not in the kernel too (default %lu)\n"
	"  -b, --buffer-kb=KB      per-CPU ring buffer size\n"
	"  -C, --clock=NAME        trace clock (default: the kernel's)\n"
	"  -t, --tracing-dir=DIR   read a tracefs tree at DIR as it is (e.g. a captured\n"
	"                          fixture); implies no instance unless -i is given\n"
	"      --stdout            print decoded records as text on standard output\n"
	"      --common            with --stdout, add every common field\n"
	"      --no-time           with --stdout, leave out timestamps\n"
	"      --once              drain what the buffers hold, then exit\n"
	"  -d, --duration=SEC      stop after SEC seconds\n"
	"      --max-latency-ms=MS how late a record may reach a subscriber that asks\n"
	"                          no bound of its own (default %lu)\n"
	"      --wake-percent=N    drain a CPU at once when its buffer is this full\n"
	"                          (default %lu)\n"
	"      --drain-ms=MS       the drain timer's period itself (default: 3/4 of\n"
	"                          the shortest latency bound in force)\n"
	"      --max-pages=N       pages taken from one CPU per pass (default %lu)\n"
	"      --ring-pages=N      slots per CPU of the page ring (default %lu: %d times\n"
	"                          the kernel's buffer)\n"
	"  -h, --help              this text\n"
	"  -V, --version           version\n",
	rt_config_default_str(RT_CONF_SOCKET), rt_config_default_str(RT_CONF_GROUP),
	rt_config_default_num(RT_CONF_MAX_QUEUE_KB), rt_config_default_num(RT_CONF_MAX_CLIENTS),
	rt_config_default_num(RT_CONF_MAX_EVENTS),
	rt_config_default_num(RT_CONF_MAX_CLIENTS_PER_PEER),
	rt_config_default_num(RT_CONF_MAX_PENDING_PER_PEER),
	rt_config_default_num(RT_CONF_STATUS_SEC), rt_config_default_str(RT_CONF_NATS_STREAM),
	rt_config_default_num(RT_CONF_NATS_MAX_PENDING), rt_config_default_str(RT_CONF_INSTANCE),
	rt_config_default_num(RT_CONF_TRACE_SELF),
	rt_config_default_num(RT_CONF_KERNEL_SELECTION),
	rt_config_default_num(RT_CONF_MAX_LATENCY_MS),
	rt_config_default_num(RT_CONF_WAKE_PERCENT), rt_config_default_num(RT_CONF_MAX_PAGES),
	rt_config_default_num(RT_CONF_RING_PAGES), RT_CONFIG_RING_BUFFERS);
}

int ringtapd_split_list(const char *csv, char ***out)
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

static const struct option longopts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "print-config", no_argument, NULL, OPT_PRINT_CONFIG },
	{ "events", required_argument, NULL, 'e' },
	{ "socket", required_argument, NULL, 's' },
	{ "group", required_argument, NULL, 'g' },
	{ "instance", required_argument, NULL, 'i' },
	{ "buffer-kb", required_argument, NULL, 'b' },
	{ "trace-self", required_argument, NULL, OPT_CONFIG_KEY },
	{ "kernel-selection", required_argument, NULL, OPT_CONFIG_KEY },
	{ "clock", required_argument, NULL, 'C' },
	{ "max-queue-kb", required_argument, NULL, OPT_CONFIG_KEY },
	{ "max-clients", required_argument, NULL, OPT_CONFIG_KEY },
	{ "max-events", required_argument, NULL, OPT_CONFIG_KEY },
	{ "max-clients-per-peer", required_argument, NULL, OPT_CONFIG_KEY },
	{ "max-pending-per-peer", required_argument, NULL, OPT_CONFIG_KEY },
	{ "drain-ms", required_argument, NULL, OPT_CONFIG_KEY },
	{ "max-latency-ms", required_argument, NULL, OPT_CONFIG_KEY },
	{ "wake-percent", required_argument, NULL, OPT_CONFIG_KEY },
	{ "max-pages", required_argument, NULL, OPT_CONFIG_KEY },
	{ "ring-pages", required_argument, NULL, OPT_CONFIG_KEY },
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
	{ "nats-max-message-kb", required_argument, NULL, OPT_CONFIG_KEY },
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
/* The most seconds --duration takes: far beyond any run, well within the timer's reach. */
#define DURATION_MAX_SEC 4294967295UL

/* --duration: seconds, a fraction down to the microsecond the timer counts. */
static int take_duration(struct ringtapd *d)
{
	size_t digits = strspn(optarg, "0123456789");
	double sec;

	/* strtod alone would take blanks, a sign, exponents, hex, "inf" and "nan". */
	if (optarg[digits] == '.')
		digits += 1 + strspn(optarg + digits + 1, "0123456789");
	if (!*optarg || optarg[digits] || optarg[digits - 1] == '.') {
		fprintf(stderr, "ringtapd: --duration=%s: not a number of seconds\n", optarg);
		return -EINVAL;
	}
	sec = strtod(optarg, NULL);
	if (sec * 1e6 < 1 || sec > DURATION_MAX_SEC) {
		fprintf(stderr, "ringtapd: --duration=%s: out of range (0.000001 to %lu seconds)\n",
			optarg, DURATION_MAX_SEC);
		return -EINVAL;
	}
	d->duration_us = (uint64_t)(sec * 1e6);
	return 0;
}

/* --wait-subscribers: never more than max_clients could ever let in. */
static int take_wait_subscribers(struct ringtapd *d)
{
	struct rt_why why = { "" };
	unsigned long n;

	if (rt_config_number(optarg, 0, rt_config_key_max(RT_CONF_MAX_CLIENTS), &n, &why)) {
		fprintf(stderr, "ringtapd: --wait-subscribers=%s: %s\n", optarg, why.text);
		return -EINVAL;
	}
	d->wait_subscribers = (unsigned int)n;
	return 0;
}

/*
 * One option's effect on d; *key is set to the config key it gives a value
 * (-1: none). -EINVAL for an option that is not ours (-EBADMSG for a value
 * of ours it refused, said on stderr).
 */
static int take_option(struct ringtapd *d, int c, int idx, int *key)
{
	*key = -1;
	switch (c) {
	case 'c':
		d->config_path = optarg;
		d->config_path_given = true;
		break;
	case OPT_PRINT_CONFIG:
		d->print_config = true;
		break;
	case OPT_CONFIG_KEY:
		*key = rt_config_key_by_name(longopts[idx].name, strlen(longopts[idx].name));
		break;
	case OPT_WAIT_SUBSCRIBERS:
		return take_wait_subscribers(d) ? -EBADMSG : 0;
	case 't':
		d->opts.tracing_dir = optarg;
		break;
	case 'd':
		return take_duration(d) ? -EBADMSG : 0;
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
		d->exit_now = true;
		break;
	case 'V':
		printf("ringtapd %s%s%s%s\n", RINGTAP_VERSION, *RINGTAP_BUILD ? " (built " : "",
		       RINGTAP_BUILD, *RINGTAP_BUILD ? ")" : "");
		d->exit_now = true;
		break;
	default:
		for (size_t i = 0; i < sizeof(short_keys) / sizeof(short_keys[0]); i++)
			if (short_keys[i].opt == c)
				*key = (int)short_keys[i].key;
		if (*key < 0)
			return -EINVAL;
	}
	return 0;
}

int ringtapd_parse_args(struct ringtapd *d, int argc, char **argv)
{
	struct rt_why why = { "" };
	int c, idx, ret;

	d->config_path = RT_CONFIG_DEFAULT_PATH;
	rt_config_defaults(&d->cli);
	while ((c = getopt_long(argc, argv, "c:e:s:g:i:b:C:t:d:hV", longopts, &idx)) != -1) {
		int key;

		ret = take_option(d, c, idx, &key);
		if (ret == -EINVAL)
			usage(stderr);
		if (ret)
			return -EINVAL;
		if (d->exit_now)
			return 0;
		if (key >= 0 && rt_config_set(&d->cli, (enum rt_config_key)key, optarg, &why)) {
			char name[64];

			/* Named as the long option, whichever spelling was given. */
			snprintf(name, sizeof(name), "%s", rt_config_key_name((enum rt_config_key)key));
			for (char *u = strchr(name, '_'); u; u = strchr(u, '_'))
				*u = '-';
			fprintf(stderr, "ringtapd: --%s=%s: %s\n", name, optarg, why.text);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ringtapd: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

int ringtapd_load_config(struct ringtapd *d, struct rt_config *cfg)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	struct rt_why why = { "" };
	unsigned int line;
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
		rt_log(LOG_ERR, "config %s:%u: %s", d->config_path, line, why.text);
		return ret;
	}
	return rt_config_merge(cfg, &d->cli);
}

void ringtapd_server_limits(const struct rt_config *cfg, struct rt_server_limits *l)
{
	l->max_queue = cfg->num[RT_CONF_MAX_QUEUE_KB] << 10;
	l->max_clients = (unsigned int)cfg->num[RT_CONF_MAX_CLIENTS];
	l->max_events = (unsigned int)cfg->num[RT_CONF_MAX_EVENTS];
	l->max_clients_per_peer = (unsigned int)cfg->num[RT_CONF_MAX_CLIENTS_PER_PEER];
	l->max_pending_per_peer = (unsigned int)cfg->num[RT_CONF_MAX_PENDING_PER_PEER];
}

int ringtapd_apply_settings(struct ringtapd *d)
{
	struct rt_config *cfg = &d->cfg;
	const char *events = cfg->str[RT_CONF_EVENTS];

	d->server_opts.socket_path = rt_config_str(cfg, RT_CONF_SOCKET);
	d->server_opts.group = rt_config_str(cfg, RT_CONF_GROUP);
	ringtapd_server_limits(cfg, &d->server_opts.limits);
	d->server_opts.tcp_listen = rt_config_str(cfg, RT_CONF_LISTEN_TCP);
	d->server_opts.tls_cert = rt_config_str(cfg, RT_CONF_TLS_CERT);
	d->server_opts.tls_key = rt_config_str(cfg, RT_CONF_TLS_KEY);
	d->server_opts.tls_ca = rt_config_str(cfg, RT_CONF_TLS_CA);
	d->server_opts.tls_clients = rt_config_str(cfg, RT_CONF_TLS_CLIENTS);
	d->server_opts.tcp_insecure = cfg->num[RT_CONF_TCP_INSECURE];
	d->server_opts.user_space_selection = !cfg->num[RT_CONF_KERNEL_SELECTION];
	/* A captured tree is read as it is, unless the command line names an instance. */
	if (!d->opts.tracing_dir)
		d->opts.instance_name = rt_config_str(cfg, RT_CONF_INSTANCE);
	else
		d->opts.instance_name = d->cli.str[RT_CONF_INSTANCE];
	d->opts.buffer_kb = cfg->num[RT_CONF_BUFFER_KB];
	d->opts.clock = cfg->str[RT_CONF_CLOCK];
	ringtapd_apply_timing(d, cfg);
	d->max_pages_per_pass = (unsigned int)cfg->num[RT_CONF_MAX_PAGES];
	d->status_sec = (unsigned int)cfg->num[RT_CONF_STATUS_SEC];
	if (!events && d->to_stdout)
		events = RT_CONFIG_STDOUT_EVENTS;
	if (events && ringtapd_split_list(events, &d->event_globs)) {
		rt_log(LOG_ERR, "bad events list '%s'", events);
		return -EINVAL;
	}
	if (!cfg->str[RT_CONF_NATS_URL])
		return 0;
	events = cfg->str[RT_CONF_NATS_EVENTS] ?: events;
	if (!events || ringtapd_split_list(events, &d->nats_globs)) {
		rt_log(LOG_ERR, "nats_url needs nats_events (or events): what to publish");
		return -EINVAL;
	}
	return 0;
}

void ringtapd_apply_timing(struct ringtapd *d, const struct rt_config *cfg)
{
	d->max_latency_ms = (unsigned int)cfg->num[RT_CONF_MAX_LATENCY_MS];
	d->drain_ms = (unsigned int)cfg->num[RT_CONF_DRAIN_MS];
	d->wake_percent = (unsigned int)cfg->num[RT_CONF_WAKE_PERCENT];
}

void ringtapd_release_settings(struct ringtapd *d)
{
	rt_strv_free(d->event_globs);
	rt_strv_free(d->nats_globs);
	d->event_globs = d->nats_globs = NULL;
	rt_config_release(&d->cfg);
	rt_config_release(&d->cli);
}
