// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * settings: what ringtapd's command line and settings file mean for the
 * session, the server and the loop (daemon/settings.c), without tracefs:
 * nothing but the defaults of config.c's key table when nothing is given,
 * the command line over the file key by key, a bad value refused with the
 * key and the reason before anything starts.
 */
#include <fcntl.h>
#include <getopt.h>
#include <unistd.h>

#include "check.h"
#include "ringtap.h"
#include "ringtapd.h"

static char scratch[] = "/tmp/test-settings-XXXXXX";

/* Runs argv through ringtapd_parse_args, then the file and the meaning. */
static int settle(struct ringtapd *d, const char *const *args, bool apply)
{
	char *argv[32] = { "ringtapd" };
	int argc = 1, ret;

	while (*args)
		argv[argc++] = (char *)*args++;
	memset(d, 0, sizeof(*d));
	optind = 0;
	ret = ringtapd_parse_args(d, argc, argv);
	if (!ret)
		ret = ringtapd_load_config(d, &d->cfg);
	if (!ret && apply)
		ret = ringtapd_apply_settings(d);
	return ret;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

/* What went to stderr while fn ran, into buf. */
static int with_stderr(char *buf, size_t size, struct ringtapd *d, const char *const *args)
{
	char path[64];
	int saved = dup(2), fd, ret;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/stderr", scratch);
	fflush(stderr);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	dup2(fd, 2);
	ret = settle(d, args, true);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, buf, size - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	return ret;
}

static void test_defaults(void)
{
	char conf[64];
	struct ringtapd d;

	snprintf(conf, sizeof(conf), "%s/empty.conf", scratch);
	write_file(conf, "# nothing set\n");
	CHECK_EQ(settle(&d, (const char *[]){ "-c", conf, NULL }, true), 0);
	CHECK_STR(d.server_opts.socket_path, rt_config_default_str(RT_CONF_SOCKET));
	CHECK_STR(d.server_opts.socket_path, "/run/ringtap/ringtapd.sock");
	/* libringtap's default is the daemon's. */
	CHECK_STR(RINGTAP_DEFAULT_SOCKET, rt_config_default_str(RT_CONF_SOCKET));
	CHECK_STR(d.server_opts.group, rt_config_default_str(RT_CONF_GROUP));
	CHECK_STR(d.opts.instance_name, rt_config_default_str(RT_CONF_INSTANCE));
	CHECK_STR(d.server_opts.tls_ca, rt_config_default_str(RT_CONF_TLS_CA));
	CHECK(d.server_opts.tcp_listen == NULL);
	CHECK(d.opts.clock == NULL);
	CHECK_EQ(d.server_opts.limits.max_queue, rt_config_default_num(RT_CONF_MAX_QUEUE_KB) << 10);
	CHECK_EQ(d.server_opts.limits.max_queue, 4096 << 10);
	CHECK_EQ(d.server_opts.limits.max_clients, rt_config_default_num(RT_CONF_MAX_CLIENTS));
	CHECK_EQ(d.server_opts.limits.max_events, rt_config_default_num(RT_CONF_MAX_EVENTS));
	CHECK_EQ(d.server_opts.limits.max_clients_per_peer,
		 rt_config_default_num(RT_CONF_MAX_CLIENTS_PER_PEER));
	CHECK_EQ(d.server_opts.limits.max_pending_per_peer,
		 rt_config_default_num(RT_CONF_MAX_PENDING_PER_PEER));
	CHECK_EQ(d.server_opts.user_space_selection, !rt_config_default_num(RT_CONF_KERNEL_SELECTION));
	CHECK_EQ(d.max_latency_ms, rt_config_default_num(RT_CONF_MAX_LATENCY_MS));
	CHECK_EQ(d.max_latency_ms, 100);
	CHECK_EQ(d.wake_percent, rt_config_default_num(RT_CONF_WAKE_PERCENT));
	CHECK_EQ(d.drain_ms, rt_config_default_num(RT_CONF_DRAIN_MS));
	CHECK_EQ(d.max_pages_per_pass, rt_config_default_num(RT_CONF_MAX_PAGES));
	CHECK_EQ(d.status_sec, rt_config_default_num(RT_CONF_STATUS_SEC));
	CHECK(d.event_globs == NULL);
	CHECK(d.nats_globs == NULL);
	ringtapd_release_settings(&d);

	/* --stdout alone prints the test source's events. */
	CHECK_EQ(settle(&d, (const char *[]){ "-c", conf, "--stdout", NULL }, true), 0);
	CHECK(d.event_globs && d.event_globs[0] && !d.event_globs[1]);
	if (d.event_globs)
		CHECK_STR(d.event_globs[0], "ringtap_test:*");
	ringtapd_release_settings(&d);

	/* A captured tree is read as it is: no instance unless -i names one. */
	CHECK_EQ(settle(&d, (const char *[]){ "-c", conf, "-t", "/nowhere", NULL }, true), 0);
	CHECK(d.opts.instance_name == NULL);
	ringtapd_release_settings(&d);
	CHECK_EQ(settle(&d, (const char *[]){ "-c", conf, "-t", "/x", "-i", "mine", NULL }, true), 0);
	CHECK_STR(d.opts.instance_name, "mine");
	ringtapd_release_settings(&d);
}

static void test_command_line_over_file(void)
{
	char conf[64];
	struct ringtapd d;

	snprintf(conf, sizeof(conf), "%s/set.conf", scratch);
	write_file(conf, "max_clients = 8\nsocket = /tmp/from-file.sock\nwake_percent = 20\n"
			 "events = sched:*\nnats_url = nats://h:4222\n");
	CHECK_EQ(settle(&d, (const char *[]){ "--max-clients=9", "-c", conf, "-e",
					      "a:b,c:d", "--drain-ms", "7", NULL }, true), 0);
	CHECK_EQ(d.server_opts.limits.max_clients, 9);
	CHECK_STR(d.server_opts.socket_path, "/tmp/from-file.sock");
	CHECK_EQ(d.wake_percent, 20);
	CHECK_EQ(d.drain_ms, 7);
	CHECK(d.event_globs && d.event_globs[0] && d.event_globs[1] && !d.event_globs[2]);
	if (d.event_globs && d.event_globs[0] && d.event_globs[1]) {
		CHECK_STR(d.event_globs[0], "a:b");
		CHECK_STR(d.event_globs[1], "c:d");
	}
	/* NATS publishes the events when nats_events is not set. */
	CHECK(d.nats_globs && d.nats_globs[0]);
	if (d.nats_globs && d.nats_globs[0])
		CHECK_STR(d.nats_globs[0], "a:b");
	CHECK_EQ(d.cli.given, (1u << RT_CONF_MAX_CLIENTS) | (1u << RT_CONF_EVENTS) |
				      (1u << RT_CONF_DRAIN_MS));
	ringtapd_release_settings(&d);
}

static void test_refused(void)
{
	char conf[64], err[512];
	struct ringtapd d;

	CHECK_EQ(with_stderr(err, sizeof(err), &d,
			     (const char *[]){ "--max-clients=0", NULL }), -EINVAL);
	CHECK_STR(err, "ringtapd: --max-clients=0: out of range (1 to 4096)\n");
	ringtapd_release_settings(&d);
	CHECK_EQ(with_stderr(err, sizeof(err), &d,
			     (const char *[]){ "--wake-percent=x", NULL }), -EINVAL);
	CHECK_STR(err, "ringtapd: --wake-percent=x: not a number\n");
	ringtapd_release_settings(&d);
	CHECK_EQ(with_stderr(err, sizeof(err), &d, (const char *[]){ "--no-such", NULL }),
		 -EINVAL);
	CHECK(strstr(err, "Usage: ringtapd") != NULL);
	ringtapd_release_settings(&d);

	snprintf(conf, sizeof(conf), "%s/bad.conf", scratch);
	write_file(conf, "max_clients = 8\n\nmax_pages = 0\n");
	CHECK_EQ(with_stderr(err, sizeof(err), &d, (const char *[]){ "-c", conf, NULL }),
		 -EINVAL);
	CHECK(strstr(err, "bad.conf:3: max_pages = 0: out of range (1 to 65536)\n") != NULL);
	ringtapd_release_settings(&d);

	/* A file named on the command line must exist. */
	snprintf(conf, sizeof(conf), "%s/missing.conf", scratch);
	CHECK_EQ(with_stderr(err, sizeof(err), &d, (const char *[]){ "-c", conf, NULL }),
		 -ENOENT);
	CHECK(strstr(err, "missing.conf: No such file or directory") != NULL);
	ringtapd_release_settings(&d);

	/* A directory is not a settings file: said with its name. */
	CHECK_EQ(with_stderr(err, sizeof(err), &d, (const char *[]){ "-c", scratch, NULL }),
		 -EISDIR);
	CHECK(strstr(err, ": Is a directory\n") != NULL);
	CHECK(strstr(err, scratch) != NULL);
	ringtapd_release_settings(&d);

	/* NATS with nothing to publish. */
	snprintf(conf, sizeof(conf), "%s/nats.conf", scratch);
	write_file(conf, "nats_url = nats://h:4222\n");
	CHECK_EQ(with_stderr(err, sizeof(err), &d, (const char *[]){ "-c", conf, NULL }),
		 -EINVAL);
	CHECK(strstr(err, "nats_url needs nats_events") != NULL);
	ringtapd_release_settings(&d);
}

/* One option and its value; the one line it must give (NULL: none, accepted). */
static void expect_option(const char *opt, const char *value, const char *want)
{
	char err[512], want_line[256];
	struct ringtapd d;
	int ret;

	ret = with_stderr(err, sizeof(err), &d, (const char *[]){ opt, value, NULL });
	CHECK_EQ(ret, want ? -EINVAL : 0);
	snprintf(want_line, sizeof(want_line), "ringtapd: %s\n", want ? want : "");
	CHECK_STR(err, want ? want_line : "");
	ringtapd_release_settings(&d);
}

/* The options that are no key: the whole value a number, in range, or refused. */
static void test_numbers(void)
{
	const char *durations[] = { "abc", "-1", "0", "1x", "", "inf", "nan", " 1", "1e3",
				    "4294967296", "0.0000001", NULL };
	char want[128];
	struct ringtapd d;

	for (const char *const *v = durations; *v; v++) {
		snprintf(want, sizeof(want), "--duration=%s: %s", *v,
			 strspn(*v, "0123456789.") == strlen(*v) && **v ?
			 "out of range (0.000001 to 4294967295 seconds)" : "not a number of seconds");
		expect_option("--duration", *v, want);
	}
	expect_option("-d", "1.", "--duration=1.: not a number of seconds");
	expect_option("-d", "1.2.3", "--duration=1.2.3: not a number of seconds");
	CHECK_EQ(settle(&d, (const char *[]){ "-d", "1.5", NULL }, true), 0);
	CHECK_EQ(d.duration_us, 1500000);
	ringtapd_release_settings(&d);
	CHECK_EQ(settle(&d, (const char *[]){ "--duration=.25", NULL }, true), 0);
	CHECK_EQ(d.duration_us, 250000);
	ringtapd_release_settings(&d);

	expect_option("--wait-subscribers", "abc", "--wait-subscribers=abc: not a number");
	expect_option("--wait-subscribers", "-1", "--wait-subscribers=-1: not a number");
	expect_option("--wait-subscribers", "3 ", "--wait-subscribers=3 : not a number");
	/* Never more than the most subscribers max_clients allows. */
	expect_option("--wait-subscribers", "4097", "--wait-subscribers=4097: out of range (0 to 4096)");
	CHECK_EQ(settle(&d, (const char *[]){ "--wait-subscribers", "3", NULL }, true), 0);
	CHECK_EQ(d.wait_subscribers, 3);
	ringtapd_release_settings(&d);

	/* Keys given as options, short ones too, named as their long option. */
	expect_option("-b", "-1", "--buffer-kb=-1: not a number");
	expect_option("--max-pages", "0", "--max-pages=0: out of range (1 to 65536)");
	expect_option("--status-sec", "5s", "--status-sec=5s: not a number");
}

int main(void)
{
	char path[64];

	if (!mkdtemp(scratch)) {
		perror("mkdtemp");
		return 1;
	}
	test_defaults();
	test_command_line_over_file();
	test_refused();
	test_numbers();
	for (const char *const *f = (const char *const[]){ "stderr", "empty.conf", "set.conf",
							   "bad.conf", "nats.conf", NULL };
	     *f; f++) {
		snprintf(path, sizeof(path), "%s/%s", scratch, *f);
		unlink(path);
	}
	rmdir(scratch);
	return check_exit("settings");
}
