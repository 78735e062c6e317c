// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <nats/nats.h>

#include "collect-nats.h"
#include "config.h"
#include "published.h"

/* How long one wait for a message lasts: the limits and signals are looked at between. */
#define POLL_MS 200

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool stop_asked(void)
{
	sigset_t pending;

	sigpending(&pending);
	return sigismember(&pending, SIGINT) || sigismember(&pending, SIGTERM);
}

static int say(const char *what, natsStatus s)
{
	const char *text = nats_GetLastError(NULL);

	fprintf(stderr, "ringtap collect: %s: %s\n", what, text && *text ? text : natsStatus_GetText(s));
	return -EIO;
}

/* Reads the subscription until a limit; the collector's errors end it. */
static int consume(natsSubscription *sub, struct rt_collector *col,
		   const struct rt_collect_nats_opts *o)
{
	double deadline = o->seconds > 0 ? now_s() + o->seconds : 0;

	while (!stop_asked() && (!deadline || now_s() < deadline) &&
	       (!o->count || col->records < o->count)) {
		natsMsg *msg = NULL;
		natsStatus s = natsSubscription_NextMsg(&msg, sub, POLL_MS);
		jsMsgMetaData *meta = NULL;
		bool caught_up = false;
		int ret;

		if (s == NATS_TIMEOUT)
			continue;
		if (s != NATS_OK)
			return say("reading the stream", s);
		ret = rt_collector_take(col, natsMsg_GetSubject(msg),
					(const uint8_t *)natsMsg_GetData(msg),
					(size_t)natsMsg_GetDataLength(msg));
		if (o->drain && natsMsg_GetMetaData(&meta, msg) == NATS_OK) {
			caught_up = meta->NumPending == 0;
			jsMsgMetaData_Destroy(meta);
		}
		natsMsg_Destroy(msg);
		if (ret && ret != -EBADMSG) {
			fprintf(stderr, "ringtap collect: writing: %s\n", strerror(-ret));
			return ret;
		}
		if (caught_up)
			break;
	}
	return 0;
}

int rt_collect_nats(const char *url, const char *stream, const char *outdir,
		    const struct rt_collect_nats_opts *o)
{
	natsConnection *nc = NULL;
	natsSubscription *sub = NULL;
	struct rt_collector col;
	jsCtx *js = NULL;
	jsSubOptions so;
	jsErrCode jerr = 0;
	sigset_t mask;
	natsStatus s;
	int ret;

	/* Ctrl-C ends the reading, not the program: the files are flushed and summed up. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if (mkdir(outdir, 0755) && errno != EEXIST) {
		fprintf(stderr, "ringtap collect: %s: %s\n", outdir, strerror(errno));
		return -errno;
	}
	ret = rt_collector_init(&col, outdir, 0);
	if (ret)
		return ret;
	s = natsConnection_ConnectTo(&nc, url);
	if (s != NATS_OK) {
		ret = say(url, s);
		goto out;
	}
	s = natsConnection_JetStream(&js, nc, NULL);
	if (s == NATS_OK)
		s = jsSubOptions_Init(&so);
	if (s != NATS_OK) {
		ret = say("JetStream", s);
		goto out;
	}
	so.Stream = stream;
	/* In stream order, from the first message, nothing to acknowledge. */
	so.Ordered = true;
	so.Config.DeliverPolicy = js_DeliverAll;
	s = js_SubscribeSync(&sub, js, o->subject ? o->subject : "ringtap.>", NULL, &so, &jerr);
	if (s != NATS_OK) {
		ret = say(stream, s);
		goto out;
	}
	ret = consume(sub, &col, o);
	if (rt_collector_flush(&col) && !ret) {
		fprintf(stderr, "ringtap collect: writing into %s: %s\n", outdir, strerror(errno));
		ret = -EIO;
	}
	rt_collector_summary(&col, stderr);
out:
	natsSubscription_Destroy(sub);
	jsCtx_Destroy(js);
	natsConnection_Destroy(nc);
	rt_collector_release(&col);
	nats_CloseAndWait(1000);
	return ret;
}

static void usage(FILE *f)
{
	fputs("Usage: ringtap collect --nats URL [OPTIONS]\n"
	      "Reads what ringtapd instances publish to NATS JetStream, from the stream's\n"
	      "first message, and writes DIR/HOST.txt per host: the lines ringtap stream\n"
	      "prints, \"# cpu N: lost M events (kernel|queue)\" where records were lost.\n"
	      "Prints one status line per host on standard error at the end.\n\n"
	      "      --nats=URL         NATS server, e.g. nats://127.0.0.1:4222\n"
	      "  -o, --output=DIR       where the files go (default .)\n"
	      "      --stream=NAME      JetStream stream (default RINGTAP)\n"
	      "      --subject=SUBJECT  only these subjects (default ringtap.>), e.g.\n"
	      "                         ringtap.web1.>\n"
	      "  -n, --count=N          stop after N records\n"
	      "      --seconds=S        stop after S seconds\n"
	      "      --drain            stop once every message the stream held was read\n"
	      "  -h, --help             this text\n",
	      f);
}

int rt_collect_nats_main(int argc, char **argv)
{
	enum { OPT_NATS = 256, OPT_STREAM, OPT_SUBJECT, OPT_SECONDS, OPT_DRAIN };
	static const struct option longopts[] = {
		{ "nats", required_argument, NULL, OPT_NATS },
		{ "output", required_argument, NULL, 'o' },
		{ "stream", required_argument, NULL, OPT_STREAM },
		{ "subject", required_argument, NULL, OPT_SUBJECT },
		{ "count", required_argument, NULL, 'n' },
		{ "seconds", required_argument, NULL, OPT_SECONDS },
		{ "drain", no_argument, NULL, OPT_DRAIN },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct rt_collect_nats_opts o = { 0 };
	const char *url = NULL, *outdir = ".", *stream = rt_config_default_str(RT_CONF_NATS_STREAM);
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, ":o:n:h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_NATS:
			url = optarg;
			break;
		case 'o':
			outdir = optarg;
			break;
		case OPT_STREAM:
			stream = optarg;
			break;
		case OPT_SUBJECT:
			o.subject = optarg;
			break;
		case 'n':
			errno = 0;
			o.count = strtoull(optarg, &end, 10);
			if (errno || *end || !*optarg || !o.count || optarg[0] == '-') {
				fprintf(stderr, "ringtap collect: --count wants a positive number\n");
				return 1;
			}
			break;
		case OPT_SECONDS:
			o.seconds = strtod(optarg, &end);
			if (*end || !*optarg || !isfinite(o.seconds) || o.seconds <= 0) {
				fprintf(stderr, "ringtap collect: --seconds wants seconds\n");
				return 1;
			}
			break;
		case OPT_DRAIN:
			o.drain = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "ringtap collect: %s %s (see ringtap collect --help)\n",
				c == ':' ? "option needs a value:" : "unknown option", argv[optind - 1]);
			return 1;
		}
	}
	if (optind < argc || !url) {
		usage(stderr);
		return 1;
	}
	return rt_collect_nats(url, stream, outdir, &o) ? 1 : 0;
}
