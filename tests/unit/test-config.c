// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * config: what ringtapd.conf(5) promises. Defaults, "key = value" with
 * comments and blanks, errors with their line, ranges, and the command
 * line winning over the file key by key.
 */
#include "check.h"
#include "config.h"

static int parse(struct rt_config *cfg, const char *text, unsigned int *line, struct rt_why *why)
{
	return rt_config_parse(cfg, text, strlen(text), line, why);
}

static void test_defaults(void)
{
	struct rt_config cfg;
	char buf[32];

	rt_config_defaults(&cfg);
	CHECK_EQ(cfg.num[RT_CONF_MAX_CLIENTS], 64);
	CHECK_EQ(cfg.num[RT_CONF_MAX_QUEUE_KB], 4096);
	CHECK_EQ(cfg.num[RT_CONF_MAX_EVENTS], 1024);
	CHECK_EQ(cfg.num[RT_CONF_DRAIN_MS], 0);
	CHECK_EQ(cfg.num[RT_CONF_MAX_LATENCY_MS], 100);
	CHECK_EQ(cfg.num[RT_CONF_WAKE_PERCENT], 50);
	CHECK_EQ(cfg.num[RT_CONF_BUFFER_KB], 0);
	CHECK_STR(rt_config_value(&cfg, RT_CONF_SOCKET, buf, sizeof(buf)),
		  "/run/ringtap/ringtapd.sock");
	CHECK_STR(rt_config_value(&cfg, RT_CONF_GROUP, buf, sizeof(buf)), "ringtap");
	CHECK_STR(rt_config_value(&cfg, RT_CONF_EVENTS, buf, sizeof(buf)), "");
	CHECK_EQ(cfg.given, 0);
	rt_config_release(&cfg);
}

static void test_parse(void)
{
	struct rt_config cfg;
	unsigned int line = 99;
	struct rt_why why = { "" };

	rt_config_defaults(&cfg);
	CHECK_EQ(parse(&cfg, "# comment\n\n   \t\nmax_clients = 8\n  events=sched:sched_switch,"
			     "ringtap_test:*  \r\nbuffer_kb\t=\t256\n# max_events = 1\n"
			     "socket = /tmp/a b.sock", &line, &why), 0);
	CHECK_EQ(line, 8);
	CHECK_EQ(cfg.num[RT_CONF_MAX_CLIENTS], 8);
	CHECK_EQ(cfg.num[RT_CONF_BUFFER_KB], 256);
	CHECK_EQ(cfg.num[RT_CONF_MAX_EVENTS], 1024);
	CHECK_STR(cfg.str[RT_CONF_EVENTS], "sched:sched_switch,ringtap_test:*");
	CHECK_STR(cfg.str[RT_CONF_SOCKET], "/tmp/a b.sock");
	CHECK_EQ(cfg.given, (1u << RT_CONF_MAX_CLIENTS) | (1u << RT_CONF_EVENTS) |
				    (1u << RT_CONF_BUFFER_KB) | (1u << RT_CONF_SOCKET));
	/* A later line wins. */
	CHECK_EQ(parse(&cfg, "max_clients = 9\nmax_clients = 10\n", &line, &why), 0);
	CHECK_EQ(cfg.num[RT_CONF_MAX_CLIENTS], 10);
	rt_config_release(&cfg);
}

static void expect_error(const char *text, unsigned int want_line, const char *want_why)
{
	struct rt_config cfg;
	unsigned int line = 0;
	struct rt_why why = { "" };

	rt_config_defaults(&cfg);
	CHECK_EQ(parse(&cfg, text, &line, &why), -EINVAL);
	CHECK_EQ(line, want_line);
	CHECK_STR(why.text, want_why);
	rt_config_release(&cfg);
}

static void test_errors(void)
{
	/* Each reason names the key (and the value it refuses) and, for a range, the range. */
	expect_error("max_clients = 8\nmax_client = 8\n", 2, "unknown key 'max_client'");
	expect_error("# a\nmax-clients = 8\n", 2, "unknown key 'max-clients'");	/* the option's */
	expect_error("max_clients 8\n", 1, "expected \"key = value\"");
	expect_error("\n\nmax_clients = eight\n", 3, "max_clients = eight: not a number");
	expect_error("max_clients = -1\n", 1, "max_clients = -1: not a number");
	expect_error("max_clients = 8x\n", 1, "max_clients = 8x: not a number");
	expect_error("max_clients = 0\n", 1, "max_clients = 0: out of range (1 to 4096)");
	expect_error("max_clients = 99999999999999999999999\n", 1,
		     "max_clients = 99999999999999999999999: out of range (1 to 4096)");
	expect_error("drain_ms = 10001\n", 1, "drain_ms = 10001: out of range (0 to 10000)");
	expect_error("max_latency_ms = 9\n", 1, "max_latency_ms = 9: out of range (10 to 60000)");
	expect_error("wake_percent = 0\n", 1, "wake_percent = 0: out of range (1 to 100)");
	expect_error("max_pages = +5\n", 1, "max_pages = +5: not a number");
	expect_error("socket =\n", 1, "socket: empty value");
	expect_error("=3\n", 1, "unknown key ''");
	expect_error("max_queue_kb = 63\n", 1, "max_queue_kb = 63: out of range (64 to 1048576)");
}

/* The command line's numbers that are not keys, held to the same rule. */
static void test_number(void)
{
	struct rt_why why = { "" };
	unsigned long v = 7;

	CHECK_EQ(rt_config_number("12", 0, 20, &v, &why), 0);
	CHECK_EQ(v, 12);
	CHECK_EQ(rt_config_number("abc", 0, 20, &v, &why), -EINVAL);
	CHECK_STR(why.text, "not a number");
	CHECK_EQ(rt_config_number("-1", 0, 20, &v, &why), -EINVAL);
	CHECK_STR(why.text, "not a number");
	CHECK_EQ(rt_config_number("", 0, 20, &v, &why), -EINVAL);
	CHECK_STR(why.text, "not a number");
	CHECK_EQ(rt_config_number("21", 0, 20, &v, &why), -EINVAL);
	CHECK_STR(why.text, "out of range (0 to 20)");
	CHECK_EQ(v, 12);
	CHECK_EQ(rt_config_key_max(RT_CONF_MAX_CLIENTS), 4096);
}

static void test_merge(void)
{
	struct rt_config file, cli;
	unsigned int line;
	struct rt_why why = { "" };
	char buf[32];

	rt_config_defaults(&file);
	rt_config_defaults(&cli);
	CHECK_EQ(parse(&file, "max_clients = 8\ngroup = wheel\nmax_pages = 7\n", &line, &why), 0);
	CHECK_EQ(rt_config_set(&cli, RT_CONF_MAX_CLIENTS, "3", &why), 0);
	CHECK_EQ(rt_config_set(&cli, RT_CONF_INSTANCE, "other", &why), 0);
	CHECK_EQ(rt_config_merge(&file, &cli), 0);
	CHECK_EQ(file.num[RT_CONF_MAX_CLIENTS], 3);
	CHECK_EQ(file.num[RT_CONF_MAX_PAGES], 7);
	CHECK_STR(file.str[RT_CONF_GROUP], "wheel");
	CHECK_STR(rt_config_value(&file, RT_CONF_INSTANCE, buf, sizeof(buf)), "other");
	CHECK(!rt_config_equal(&file, &cli, RT_CONF_GROUP));
	CHECK(rt_config_equal(&file, &cli, RT_CONF_MAX_CLIENTS));
	/* Options spell keys with '-'; both spellings find the key. */
	CHECK_EQ(rt_config_key_by_name("max-queue-kb", 12), RT_CONF_MAX_QUEUE_KB);
	CHECK_EQ(rt_config_key_by_name("max_queue_kb", 12), RT_CONF_MAX_QUEUE_KB);
	CHECK_EQ(rt_config_key_by_name("max_queue", 9), -ENOENT);
	CHECK(rt_config_key_reloadable(RT_CONF_MAX_CLIENTS));
	CHECK(!rt_config_key_reloadable(RT_CONF_SOCKET));
	rt_config_release(&file);
	rt_config_release(&cli);
}

int main(void)
{
	test_defaults();
	test_parse();
	test_errors();
	test_number();
	test_merge();
	return check_exit("test-config");
}
