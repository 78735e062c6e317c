// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `ringtap status`: ringtapd's counters over its Unix socket (a Hello that
 * asks for them, one Status frame back), printed as a table, Prometheus'
 * text or OpenMetrics (core/metrics.c); with --http, as the answer to one
 * HTTP request read from standard input, for a socket-activated exporter
 * (systemd/ringtap-exporter.socket): ringtapd itself keeps no network
 * socket.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "metrics.h"
#include "ringtap.h"
#include "status.h"
#include "util.h"
#include "wire.h"

/* A request head longer than this is no scrape. */
#define REQUEST_MAX 8192
/* How long a peer may take to send its request, and ringtapd to answer. */
#define TIMEOUT_MS 5000

static void usage(FILE *f)
{
	fputs("Usage: ringtap status [-s SOCKET] [--openmetrics | --prometheus] [--http]\n"
	      "  ringtapd's counters: per CPU, per subscriber, NATS (ringtapd(8) lists them)\n"
	      "  -s, --socket=PATH      ringtapd's socket (default " RINGTAP_DEFAULT_SOCKET ")\n"
	      "      --openmetrics      OpenMetrics 1.0.0 text instead of a table\n"
	      "      --prometheus       Prometheus' text format 0.0.4 instead of a table\n"
	      "      --http             answer one HTTP request on standard input (an exporter\n"
	      "                         behind a socket unit): OpenMetrics when it accepts it,\n"
	      "                         else Prometheus' text, unless a format is given\n", f);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for fd until deadline; 0, -ETIMEDOUT or -errno. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	int64_t left = deadline - now_ms();
	int n;

	if (left <= 0)
		return -ETIMEDOUT;
	n = poll(&p, 1, (int)left);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	return n ? 0 : -ETIMEDOUT;
}

/* The request head, up to its blank line, REQUEST_MAX bytes at most, within the deadline. */
static int read_request(char *buf, size_t size, size_t *len)
{
	int64_t deadline = now_ms() + TIMEOUT_MS;
	int ret;

	*len = 0;
	while (*len < size - 1) {
		ssize_t n;

		if ((ret = wait_fd(STDIN_FILENO, POLLIN, deadline)))
			return ret;
		n = read(STDIN_FILENO, buf + *len, size - 1 - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		*len += (size_t)n;
		buf[*len] = '\0';
		if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
			return 0;
	}
	/* A head cut short still has its request line; one that never ends is refused. */
	if (*len == size - 1)
		return -EMSGSIZE;
	return *len ? 0 : -ENODATA;
}

static const char *request_problem(int err)
{
	switch (err) {
	case -ETIMEDOUT:
		return "no whole request within 5 s";
	case -EMSGSIZE:
		return "the request head is over 8 KiB";
	case -ENODATA:
		return "the connection closed before a request";
	default:
		return strerror(-err);
	}
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The Status frame from ringtapd at path; NULL with a one-line reason in why. */
static Ringtap__Frame *ask(const char *path, char *why, size_t why_size)
{
	Ringtap__Frame frame = RINGTAP__FRAME__INIT, *got = NULL;
	Ringtap__Hello hello = RINGTAP__HELLO__INIT;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int64_t deadline = now_ms() + TIMEOUT_MS;
	struct rt_wire_reader r;
	_cleanup_free_ uint8_t *bytes = NULL;
	size_t len;
	int fd = -1, ret;

	hello.min_version = 1;
	hello.max_version = 1;
	hello.client_name = "ringtap status";
	hello.has_status = true;
	hello.status = true;
	frame.msg_case = RINGTAP__FRAME__MSG_HELLO;
	frame.hello = &hello;
	rt_wire_reader_init(&r, 0);
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(why, why_size, "socket path too long: %s", path);
		goto out;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		snprintf(why, why_size, "cannot connect to %s: %s", path, strerror(errno));
		goto out;
	}
	ret = rt_wire_encode(&frame, &bytes, &len);
	ret = ret ?: write_all(fd, bytes, len);
	if (ret) {
		snprintf(why, why_size, "sending the request to %s: %s", path, strerror(-ret));
		goto out;
	}
	for (;;) {
		uint8_t buf[65536];
		size_t used = 0;
		ssize_t n;

		ret = rt_wire_reader_next(&r, &got);
		if (ret)
			break;
		if ((ret = wait_fd(fd, POLLIN, deadline)))
			break;
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n ? -errno : -ECONNRESET;
			break;
		}
		/* A whole frame may lie in buf: it is taken before buf is read into again. */
		while (used < (size_t)n && ret >= 0) {
			size_t took;

			ret = rt_wire_reader_feed(&r, buf + used, (size_t)n - used, &took);
			used += took;
			if (ret == 1 && (ret = rt_wire_reader_next(&r, &got)) == 1)
				goto answered;
		}
		if (ret < 0)
			break;
	}
answered:
	if (ret < 0) {
		snprintf(why, why_size, "no answer from %s: %s", path,
			 ret == -ECONNRESET ? "it closed the connection" : rt_wire_strerror(ret));
		got = NULL;
	} else if (got->msg_case == RINGTAP__FRAME__MSG_REFUSAL) {
		snprintf(why, why_size, "ringtapd refused: %s",
			 got->refusal->text ? got->refusal->text : "no reason given");
	} else if (got->msg_case == RINGTAP__FRAME__MSG_ERROR) {
		snprintf(why, why_size, "ringtapd: %s", got->error->text);
	} else if (got->msg_case != RINGTAP__FRAME__MSG_STATUS) {
		snprintf(why, why_size, "ringtapd answered with a %s frame, not a status "
			 "(too old a ringtapd?)", rt_wire_frame_name(got));
	}
	if (got && got->msg_case != RINGTAP__FRAME__MSG_STATUS) {
		ringtap__frame__free_unpacked(got, NULL);
		got = NULL;
	}
out:
	rt_wire_reader_release(&r);
	if (fd >= 0)
		close(fd);
	return got;
}

static int http_answer(const char *status, const char *type, const struct rt_buf *body,
		       bool head)
{
	char top[256];
	int n = snprintf(top, sizeof(top), "HTTP/1.0 %s\r\nContent-Type: %s\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n", status, type,
			 body->len);
	int ret = write_all(STDOUT_FILENO, top, (size_t)n);

	if (!ret && !head && body->len)
		ret = write_all(STDOUT_FILENO, body->data, body->len);
	return ret;
}

/* An HTTP error with its text as the body; the reason goes to stderr (the journal) too. */
static int http_fail(const char *status, const char *text)
{
	struct rt_buf body = { 0 };
	int ret;

	fprintf(stderr, "ringtap status: %s\n", text);
	if (rt_buf_put(&body, text, strlen(text)) || rt_buf_put(&body, "\n", 1))
		return 1;
	ret = http_answer(status, "text/plain; charset=utf-8", &body, false);
	rt_buf_free(&body);
	return ret ? 1 : 0;
}

int rt_status_main(int argc, char **argv)
{
	enum { OPT_OPENMETRICS = 256, OPT_PROMETHEUS, OPT_HTTP };
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "openmetrics", no_argument, NULL, OPT_OPENMETRICS },
		{ "prometheus", no_argument, NULL, OPT_PROMETHEUS },
		{ "http", no_argument, NULL, OPT_HTTP },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *path = RINGTAP_DEFAULT_SOCKET;
	enum rt_metrics_format format = RT_METRICS_TABLE;
	bool http = false, chosen = false, head = false;
	struct rt_buf text = { 0 };
	Ringtap__Frame *f;
	char why[400];
	int opt, ret;

	while ((opt = getopt_long(argc, argv, ":s:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			path = optarg;
			break;
		case OPT_OPENMETRICS:
		case OPT_PROMETHEUS:
			format = opt == OPT_OPENMETRICS ? RT_METRICS_OPENMETRICS :
							  RT_METRICS_PROMETHEUS;
			chosen = true;
			break;
		case OPT_HTTP:
			http = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, "ringtap status: option '%s' needs a value\n",
				argv[optind - 1]);
			return 1;
		default:
			fprintf(stderr, "ringtap status: unknown option '%s' (see ringtap status "
				"--help)\n", argv[optind - 1]);
			return 1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ringtap status: unexpected argument '%s'\n", argv[optind]);
		return 1;
	}
	if (http) {
		char req[REQUEST_MAX];
		enum rt_metrics_format asked;
		size_t len;

		ret = read_request(req, sizeof(req), &len);
		if (ret)
			return http_fail("400 Bad Request", request_problem(ret));
		ret = rt_metrics_http_request(req, len, &asked, &head);
		if (ret == -EOPNOTSUPP)
			return http_fail("405 Method Not Allowed", "only GET and HEAD are served");
		if (ret)
			return http_fail("400 Bad Request", "no HTTP request line");
		if (!chosen)
			format = asked;
	}
	f = ask(path, why, sizeof(why));
	if (!f) {
		if (http)
			return http_fail("503 Service Unavailable", why);
		fprintf(stderr, "ringtap status: %s\n", why);
		return 1;
	}
	ret = rt_metrics_format(f->status, format, &text);
	ringtap__frame__free_unpacked(f, NULL);
	if (ret) {
		fprintf(stderr, "ringtap status: out of memory\n");
		return 1;
	}
	if (http)
		ret = http_answer("200 OK", rt_metrics_content_type(format), &text, head);
	else
		ret = write_all(STDOUT_FILENO, text.data, text.len);
	rt_buf_free(&text);
	if (ret) {
		fprintf(stderr, "ringtap status: writing to standard output: %s\n", strerror(-ret));
		return 1;
	}
	return 0;
}
