// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * core/metrics.c: a Status with known counters as Prometheus' text,
 * OpenMetrics and the table, sample by sample; label values escaped; the
 * HTTP request's method and Accept header.
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "metrics.h"

static Ringtap__CpuCounters cpu0 = RINGTAP__CPU_COUNTERS__INIT, cpu1 = RINGTAP__CPU_COUNTERS__INIT;
static Ringtap__SubscriberCounters sub = RINGTAP__SUBSCRIBER_COUNTERS__INIT;
static Ringtap__NatsCounters nats = RINGTAP__NATS_COUNTERS__INIT;
static Ringtap__CpuCounters *cpus[] = { &cpu0, &cpu1 };
static Ringtap__SubscriberCounters *subs[] = { &sub };

static void fill(Ringtap__Status *st)
{
	cpu0.cpu = 0;
	cpu0.pages = 2;
	cpu0.events = 77;
	cpu0.unknown = 26;
	cpu0.kernel_lost = 815;
	cpu0.malformed_pages = 1;
	cpu1.cpu = 1;
	cpu1.pages = 1;
	cpu1.events = 67;
	sub.id = 7;
	sub.client_name = "a \"b\" \\c";
	sub.uid = 1000;
	sub.pid = 4242;
	sub.encoding = RINGTAP__ENCODING__RAW;
	sub.delivered = 100;
	sub.lost_queue = 3;
	sub.lost_kernel = 815;
	sub.queued_bytes = 8192;
	sub.queued_records = 12;
	sub.queue_limit_bytes = 4194304;
	nats.published = 90;
	nats.dropped = 4;
	nats.failed = 6;
	nats.acknowledged = 88;
	nats.backlog = 2;
	st->uptime_ns = 12345678901;
	st->hostname = "host1";
	st->cpus = cpus;
	st->n_cpus = 2;
	st->subscribers = subs;
	st->n_subscribers = 1;
	st->subscribers_accepted = 5;
	st->subscribers_refused = 2;
	st->lost_queue = 9;
	st->nats = &nats;
}

/* The text in format, NUL-terminated; the caller frees it. */
static char *text(const Ringtap__Status *st, enum rt_metrics_format format)
{
	struct rt_buf b = { 0 };

	CHECK_EQ(rt_metrics_format(st, format, &b), 0);
	CHECK_EQ(rt_buf_put(&b, "", 1), 0);
	return (char *)b.data;
}

static int count(const char *s, const char *needle)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

#define HAS_LINE(s, line) CHECK(strstr((s), "\n" line "\n") != NULL)

/* Every family's samples follow its TYPE line before the next family's. */
static void check_grouped(const char *s, bool open)
{
	char family[128] = "";
	const char *line = s;

	while (*line) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);

		if (!strncmp(line, "# TYPE ", 7))
			sscanf(line + 7, "%127s", family);
		else if (line[0] != '#') {
			size_t n = strlen(family);

			/* OpenMetrics names a counter's family without the _total its samples add. */
			CHECK(n && !strncmp(line, family, n));
			if (!open)
				CHECK(line[n] == '{' || line[n] == ' ');
		}
		line += len + (eol ? 1 : 0);
	}
}

static void test_prometheus(void)
{
	Ringtap__Status st = RINGTAP__STATUS__INIT;
	char *s;

	fill(&st);
	s = text(&st, RT_METRICS_PROMETHEUS);
	HAS_LINE(s, "# TYPE ringtap_uptime_seconds gauge");
	HAS_LINE(s, "ringtap_uptime_seconds 12.345");
	HAS_LINE(s, "# TYPE ringtap_cpu_events_read_total counter");
	HAS_LINE(s, "ringtap_cpu_events_read_total{cpu=\"0\"} 77");
	HAS_LINE(s, "ringtap_cpu_events_read_total{cpu=\"1\"} 67");
	HAS_LINE(s, "ringtap_cpu_pages_read_total{cpu=\"0\"} 2");
	HAS_LINE(s, "ringtap_cpu_events_unknown_total{cpu=\"0\"} 26");
	HAS_LINE(s, "ringtap_cpu_events_lost_total{cpu=\"0\",source=\"kernel\"} 815");
	HAS_LINE(s, "ringtap_cpu_malformed_pages_total{cpu=\"0\"} 1");
	HAS_LINE(s, "ringtap_subscribers 1");
	HAS_LINE(s, "ringtap_subscribers_accepted_total 5");
	HAS_LINE(s, "ringtap_subscribers_refused_total 2");
	HAS_LINE(s, "ringtap_subscribers_events_lost_total{source=\"queue\"} 9");
	HAS_LINE(s, "ringtap_subscriber_events_delivered_total{subscriber=\"7\",client=\"a \\\"b\\\" "
		    "\\\\c\",uid=\"1000\"} 100");
	HAS_LINE(s, "ringtap_subscriber_events_lost_total{subscriber=\"7\",client=\"a \\\"b\\\" "
		    "\\\\c\",uid=\"1000\",source=\"queue\"} 3");
	HAS_LINE(s, "ringtap_subscriber_events_lost_total{subscriber=\"7\",client=\"a \\\"b\\\" "
		    "\\\\c\",uid=\"1000\",source=\"kernel\"} 815");
	HAS_LINE(s, "# TYPE ringtap_subscriber_queue_bytes gauge");
	HAS_LINE(s, "ringtap_subscriber_queue_bytes{subscriber=\"7\",client=\"a \\\"b\\\" "
		    "\\\\c\",uid=\"1000\"} 8192");
	HAS_LINE(s, "ringtap_subscriber_queue_events{subscriber=\"7\",client=\"a \\\"b\\\" "
		    "\\\\c\",uid=\"1000\"} 12");
	HAS_LINE(s, "ringtap_subscriber_queue_limit_bytes{subscriber=\"7\",client=\"a \\\"b\\\" "
		    "\\\\c\",uid=\"1000\"} 4194304");
	HAS_LINE(s, "ringtap_nats_events_published_total 90");
	HAS_LINE(s, "ringtap_nats_events_lost_total{source=\"queue\"} 4");
	HAS_LINE(s, "ringtap_nats_events_lost_total{source=\"publish\"} 6");
	HAS_LINE(s, "ringtap_nats_messages_acknowledged_total 88");
	HAS_LINE(s, "ringtap_nats_backlog_messages 2");
	/* 0.0.4 has no UNIT and no EOF; every family once, HELP before TYPE. */
	CHECK_EQ(count(s, "# UNIT"), 0);
	CHECK_EQ(count(s, "# EOF"), 0);
	CHECK_EQ(count(s, "# TYPE "), 19);
	CHECK_EQ(count(s, "# HELP "), 19);
	check_grouped(s, false);
	free(s);

	/* Without NATS, nothing of it. */
	st.nats = NULL;
	s = text(&st, RT_METRICS_PROMETHEUS);
	CHECK_EQ(count(s, "ringtap_nats"), 0);
	CHECK_EQ(count(s, "# TYPE "), 15);
	free(s);
}

static void test_openmetrics(void)
{
	Ringtap__Status st = RINGTAP__STATUS__INIT;
	char *s;
	size_t len;

	fill(&st);
	s = text(&st, RT_METRICS_OPENMETRICS);
	len = strlen(s);
	HAS_LINE(s, "# TYPE ringtap_cpu_events_read counter");
	HAS_LINE(s, "ringtap_cpu_events_read_total{cpu=\"1\"} 67");
	HAS_LINE(s, "# UNIT ringtap_uptime_seconds seconds");
	HAS_LINE(s, "# UNIT ringtap_subscriber_queue_bytes bytes");
	HAS_LINE(s, "# UNIT ringtap_subscriber_queue_limit_bytes bytes");
	HAS_LINE(s, "# TYPE ringtap_nats_events_lost counter");
	CHECK_EQ(count(s, "# UNIT "), 3);
	CHECK_EQ(count(s, "_total counter"), 0);
	CHECK(len > 6 && !strcmp(s + len - 6, "# EOF\n"));
	CHECK_EQ(count(s, "# EOF"), 1);
	check_grouped(s, true);
	free(s);
}

static void test_table(void)
{
	Ringtap__Status st = RINGTAP__STATUS__INIT;
	char *s;

	fill(&st);
	s = text(&st, RT_METRICS_TABLE);
	CHECK(strstr(s, "ringtapd on host1, up 0d 00:00:12\n") == s);
	CHECK(strstr(s, "1 streaming, 5 accepted, 2 refused") != NULL);
	CHECK(strstr(s, "\n0                2             77         26            815          1\n"));
	CHECK(strstr(s, "\nall              3            144         26            815          1\n"));
	CHECK(strstr(s, "\n7     a \"b\" \\c               1000     4242 RAW               100            3"
		       "          815         12       8192\n"));
	CHECK(strstr(s, "\nNATS: 90 events published, 4 dropped (buffer full), 6 failed; 88 "
		       "messages acknowledged, 2 in the backlog\n"));
	free(s);
}

static void test_http(void)
{
	static const char scrape[] =
		"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9813\r\nUser-Agent: Prometheus/2.42.0\r\n"
		"Accept: application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
		"version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\n\r\n";
	static const char curl[] = "GET / HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n";
	static const char head[] = "HEAD /metrics HTTP/1.0\nACCEPT: Application/OpenMetrics-Text\n\n";
	enum rt_metrics_format f;
	bool is_head;

	CHECK_EQ(rt_metrics_http_request(scrape, strlen(scrape), &f, &is_head), 0);
	CHECK_EQ(f, RT_METRICS_OPENMETRICS);
	CHECK(!is_head);
	CHECK_EQ(rt_metrics_http_request(curl, strlen(curl), &f, &is_head), 0);
	CHECK_EQ(f, RT_METRICS_PROMETHEUS);
	CHECK_EQ(rt_metrics_http_request(head, strlen(head), &f, &is_head), 0);
	CHECK_EQ(f, RT_METRICS_OPENMETRICS);
	CHECK(is_head);
	CHECK_EQ(rt_metrics_http_request("POST / HTTP/1.0\r\n\r\n", 19, &f, &is_head), -EOPNOTSUPP);
	CHECK_EQ(rt_metrics_http_request("GET", 3, &f, &is_head), -EINVAL);
	CHECK_EQ(rt_metrics_http_request("\r\n\r\n", 4, &f, &is_head), -EINVAL);
	/* An Accept that only a later header line's value names is no Accept. */
	CHECK_EQ(rt_metrics_http_request("GET / HTTP/1.0\nX: application/openmetrics-text\n\n", 48,
					 &f, &is_head), 0);
	CHECK_EQ(f, RT_METRICS_PROMETHEUS);
	CHECK_STR(rt_metrics_content_type(RT_METRICS_OPENMETRICS),
		  "application/openmetrics-text; version=1.0.0; charset=utf-8");
	CHECK_STR(rt_metrics_content_type(RT_METRICS_PROMETHEUS),
		  "text/plain; version=0.0.4; charset=utf-8");
}

int main(void)
{
	test_prometheus();
	test_openmetrics();
	test_table();
	test_http();
	return check_exit("test-metrics");
}
