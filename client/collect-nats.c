// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nats/nats.h>

#include "collect-nats.h"
#include "config.h"
#include "published.h"
#include "unacked.h"

/* How long one wait for a message lasts: the limits and signals are looked at between. */
#define POLL_MS 200
/* Messages a fetch asks for: written, flushed and acknowledged together. */
#define FETCH_BATCH 256
/* A message not acknowledged by then is delivered again (to this run or the next). */
#define ACK_WAIT_S 10
/* Written, not known acknowledged: past this many the ack floor is asked (a request). */
#define PRUNE_AT (4 * FETCH_BATCH)

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

/* Every file written and flushed: what the consumer may be told is done. */
static int flush_all(struct rt_collector *col)
{
	int ret = rt_collector_flush(col);

	if (!ret && col->descriptions && fflush(col->descriptions))
		ret = -errno;
	if (ret)
		fprintf(stderr, "ringtap collect: writing: %s\n", strerror(-ret));
	return ret;
}

/* The durable consumer, for its state (libnats 3.4 gives none through a pull subscription). */
struct consumer {
	jsCtx *js;
	const char *stream, *durable;
	/* Written, acknowledgment unconfirmed: a copy delivered again is not written twice. */
	struct rt_unacked unacked;
	char unacked_path[4200];
	uint64_t again;		/* copies delivered again, acknowledged without a line */
};

/* Whether the consumer has nothing left to deliver. */
static bool caught_up(const struct consumer *cons)
{
	jsConsumerInfo *ci = NULL;
	bool done = false;

	if (js_GetConsumerInfo(&ci, cons->js, cons->stream, cons->durable, NULL, NULL) == NATS_OK)
		done = ci->NumPending == 0 && ci->NumAckPending == 0;
	jsConsumerInfo_Destroy(ci);
	return done;
}

/* Sequences JetStream delivers no more: every one up to the consumer's ack floor. */
static void prune_unacked(struct consumer *cons)
{
	jsConsumerInfo *ci = NULL;

	if (js_GetConsumerInfo(&ci, cons->js, cons->stream, cons->durable, NULL, NULL) == NATS_OK)
		rt_unacked_prune(&cons->unacked, ci->AckFloor.Stream);
	jsConsumerInfo_Destroy(ci);
}

/* A small file whole, NUL-terminated; NULL with errno set. */
static char *read_text_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *text = NULL;
	size_t cap = 0;

	if (!f)
		return NULL;
	*len = 0;
	for (;;) {
		if (cap - *len < 4096) {
			char *more = realloc(text, cap + 65536);

			if (!more) {
				free(text);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			text = more;
			cap += 65536;
		}
		size_t got = fread(text + *len, 1, cap - *len - 1, f);

		*len += got;
		if (!got)
			break;
	}
	if (ferror(f)) {
		free(text);
		fclose(f);
		errno = EIO;
		return NULL;
	}
	fclose(f);
	text[*len] = '\0';
	return text;
}

/* The set into its file, whole or not at all (a new file renamed over the old). */
static int save_unacked(const struct consumer *cons)
{
	char tmp[4300], *text = NULL;
	size_t len = 0;
	FILE *f = NULL;
	int ret = rt_unacked_format(&cons->unacked, &text, &len);

	snprintf(tmp, sizeof(tmp), "%s.new", cons->unacked_path);
	if (!ret && !(f = fopen(tmp, "we")))
		ret = -errno;
	if (!ret && fwrite(text, 1, len, f) != len)
		ret = -EIO;
	if (f && fclose(f) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, cons->unacked_path))
		ret = -errno;
	free(text);
	if (ret)
		fprintf(stderr, "ringtap collect: %s: %s\n", cons->unacked_path, strerror(-ret));
	return ret;
}

/* What an earlier run wrote and could not confirm, less what the consumer has since had acknowledged. */
static int load_unacked(struct consumer *cons, const char *outdir, uint64_t ack_floor)
{
	size_t len = 0;
	char *text;
	int ret;

	snprintf(cons->unacked_path, sizeof(cons->unacked_path), "%s/.%s.unacked", outdir,
		 cons->durable);
	text = read_text_file(cons->unacked_path, &len);
	if (!text)
		return errno == ENOENT ? 0 : -errno;
	ret = rt_unacked_parse(&cons->unacked, text, len);
	free(text);
	if (ret) {
		fprintf(stderr, "ringtap collect: %s: %s\n", cons->unacked_path,
			ret == -EBADMSG ? "not a list of stream sequences" : strerror(-ret));
		return ret;
	}
	rt_unacked_prune(&cons->unacked, ack_floor);
	return 0;
}

/*
 * A message JetStream delivers again whose copy was written and flushed
 * before its acknowledgment went missing: acknowledged, not written again.
 */
static bool written_before(struct consumer *cons, natsMsg *msg, uint64_t *stream_seq)
{
	jsMsgMetaData *meta = NULL;
	bool again = false;

	*stream_seq = 0;
	if (natsMsg_GetMetaData(&meta, msg) != NATS_OK)
		return false;
	*stream_seq = meta->Sequence.Stream;
	again = meta->NumDelivered > 1 && rt_unacked_has(&cons->unacked, *stream_seq);
	jsMsgMetaData_Destroy(meta);
	return again;
}

/*
 * Each message its own acknowledgment: a batch lost on its way (a server's
 * death) is delivered again, not acknowledged with the next as AckAll would.
 * The last one confirmed, so that a stop right after cannot lose them on
 * the way. Only that one is then known acknowledged and leaves the set; the
 * others leave it once the consumer's ack floor is past them
 * (prune_unacked): one sent to a server that died before it took it is
 * delivered again.
 */
static void acknowledge(struct consumer *cons, natsMsgList *list, const uint64_t *seqs)
{
	for (int i = 0; i < list->Count; i++)
		if ((i < list->Count - 1 ? natsMsg_Ack(list->Msgs[i], NULL) :
		     natsMsg_AckSync(list->Msgs[i], NULL, NULL)) != NATS_OK) {
			fprintf(stderr, "ringtap collect: acknowledging: %s (delivered again later, "
				"not written twice)\n", nats_GetLastError(NULL) ?: "?");
			return;
		}
	if (list->Count)
		rt_unacked_remove(&cons->unacked, seqs[list->Count - 1]);
}

/*
 * Fetches from the durable consumer until a limit; each batch is written
 * and flushed, its sequences saved as unconfirmed, then acknowledged, so
 * that a collector started again resumes after it and writes no copy of
 * it. The collector's errors end it.
 */
static int consume(natsSubscription *sub, struct consumer *cons, struct rt_collector *col,
		   const struct rt_collect_nats_opts *o, double *first, double *last)
{
	double deadline = o->seconds > 0 ? now_s() + o->seconds : 0;
	uint64_t seqs[FETCH_BATCH];
	bool warned = false;
	int taken;

	while (!stop_asked() && (!deadline || now_s() < deadline) &&
	       (!o->count || col->records < o->count)) {
		natsMsgList list = { 0 };
		natsStatus s = natsSubscription_Fetch(&list, sub, FETCH_BATCH, POLL_MS, NULL);
		uint64_t before = col->records;
		jsMsgMetaData *meta = NULL;
		bool done = false;
		int ret = 0;

		if (s == NATS_TIMEOUT) {
			if (o->drain && caught_up(cons))
				break;
			continue;
		}
		if (s != NATS_OK) {
			/*
			 * The server went away (libnats connects to another of the
			 * list) or the consumer's leader is being elected: the
			 * consumer keeps our place, so read on after a pause.
			 */
			if (!warned)
				say("reading the stream (trying again)", s);
			warned = true;
			nats_Sleep(POLL_MS);
			continue;
		}
		warned = false;
		for (taken = 0; taken < list.Count && taken < FETCH_BATCH && !ret; taken++) {
			natsMsg *msg = list.Msgs[taken];

			if (written_before(cons, msg, &seqs[taken])) {
				cons->again++;
				continue;
			}
			ret = rt_collector_take(col, natsMsg_GetSubject(msg),
						(const uint8_t *)natsMsg_GetData(msg),
						(size_t)natsMsg_GetDataLength(msg));
			if (ret == -EBADMSG)
				ret = 0;
		}
		if (o->drain && list.Count &&
		    natsMsg_GetMetaData(&meta, list.Msgs[list.Count - 1]) == NATS_OK) {
			done = meta->NumPending == 0;
			jsMsgMetaData_Destroy(meta);
		}
		if (ret) {
			fprintf(stderr, "ringtap collect: writing: %s\n", strerror(-ret));
			/* The one that failed is not counted written: its lines may be cut. */
			taken--;
		}
		/*
		 * Whatever was taken is in the set before any of it can reach its
		 * file: the flush here, or the one at the end after an error.
		 */
		for (int i = 0; i < taken; i++)
			if (seqs[i] && rt_unacked_add(&cons->unacked, seqs[i]) && !ret)
				ret = -ENOMEM;
		if (!ret)
			ret = flush_all(col);
		if (!ret && cons->unacked.n > PRUNE_AT)
			prune_unacked(cons);
		if (!ret)
			ret = save_unacked(cons);
		/* When lines were written: the rate --lag reports. */
		if (col->records != before) {
			*last = now_s();
			if (!*first)
				*first = *last;
		}
		if (!ret)
			acknowledge(cons, &list, seqs);
		natsMsgList_Destroy(&list);
		if (ret)
			return ret;
		if (done)
			break;
	}
	return 0;
}

/*
 * The durable consumer's default name: one per collecting host and output
 * directory, so that two collectors writing apart do not share messages.
 */
static void default_durable(char *buf, size_t size, const char *outdir)
{
	char host[64] = "", *real = realpath(outdir, NULL);
	const char *p = real ? real : outdir;
	uint32_t h = 2166136261u;	/* FNV-1a of the directory */

	gethostname(host, sizeof(host) - 1);
	for (; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	free(real);
	snprintf(buf, size, "ringtap-collect-%s-%08x", host, h);
	/* A consumer's name: no '.', '*', '>' or spaces. */
	for (char *c = buf; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '-' || *c == '_'))
			*c = '_';
}

/* What a previous run of the same consumer learnt: its Welcomes and Schemas. */
static int open_descriptions(struct rt_collector *col, const char *outdir, const char *durable)
{
	char path[4096];
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/.%s.descriptions", outdir, durable);
	if (col->resumed && (f = fopen(path, "re"))) {
		ret = rt_collector_restore(col, f);
		fclose(f);
		if (ret) {
			fprintf(stderr, "ringtap collect: %s: %s\n", path, strerror(-ret));
			return ret;
		}
	}
	col->descriptions = fopen(path, col->resumed ? "ae" : "we");
	if (!col->descriptions) {
		ret = -errno;
		fprintf(stderr, "ringtap collect: %s: %s\n", path, strerror(errno));
	}
	return ret;
}

/* The durable pull consumer: from the first message, or where its last run acknowledged. */
static int pull_subscribe(jsCtx *js, const char *stream, const char *durable, const char *subject,
			  natsSubscription **sub)
{
	jsErrCode jerr = 0;
	jsSubOptions so;
	natsStatus s = jsSubOptions_Init(&so);

	if (s != NATS_OK)
		return say("JetStream", s);
	so.Stream = stream;
	so.Config.Durable = durable;
	so.Config.DeliverPolicy = js_DeliverAll;
	so.Config.AckPolicy = js_AckExplicit;
	so.Config.AckWait = (int64_t)ACK_WAIT_S * 1000000000;
	so.Config.MaxAckPending = FETCH_BATCH * 4;
	s = js_PullSubscribe(sub, js, subject, durable, NULL, &so, &jerr);
	return s == NATS_OK ? 0 : say(stream, s);
}

/*
 * The end of a run (ret: how consuming ended): the files flushed, then the
 * set of unconfirmed sequences saved, less what the ack floor has passed;
 * the files finished; one line per host. ret, or the first error of these.
 */
static int finish(struct consumer *cons, struct rt_collector *col,
		  const struct rt_collect_nats_opts *o, int ret)
{
	if (rt_collector_flush(col) && !ret) {
		fprintf(stderr, "ringtap collect: writing into %s: %s\n", col->outdir,
			strerror(errno));
		ret = -EIO;
	}
	prune_unacked(cons);
	if (save_unacked(cons) && !ret)
		ret = -EIO;
	if (cons->again)
		fprintf(stderr, "ringtap collect: %" PRIu64 " messages delivered again were "
			"written before: acknowledged, not written twice\n", cons->again);
	/* Each trace.dat says its own error. */
	if (rt_collector_finish(col) && !ret)
		ret = -EIO;
	rt_collector_summary(col, stderr);
	if (o->lag)
		rt_collector_lag_summary(col, stderr);
	return ret;
}

int rt_collect_nats(const char *url, const char *stream, const char *outdir,
		    const struct rt_collect_nats_opts *o)
{
	natsConnection *nc = NULL;
	natsSubscription *sub = NULL;
	jsConsumerInfo *ci = NULL;
	struct rt_collector col;
	struct consumer cons = { .stream = stream };
	uint64_t ack_floor = 0;
	jsCtx *js = NULL;
	jsErrCode jerr = 0;
	char durable[160];
	double first = 0, last = 0;
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
	if (o->durable)
		snprintf(durable, sizeof(durable), "%s", o->durable);
	else
		default_durable(durable, sizeof(durable), outdir);
	ret = rt_collector_init(&col, outdir, 0);
	col.text_only = o->text_only;
	if (!ret && o->lag)
		ret = rt_collector_measure_lag(&col);
	if (ret)
		goto out;
	s = natsConnection_ConnectTo(&nc, url);
	if (s != NATS_OK) {
		ret = say(url, s);
		goto out;
	}
	s = natsConnection_JetStream(&js, nc, NULL);
	if (s != NATS_OK) {
		ret = say("JetStream", s);
		goto out;
	}
	ret = pull_subscribe(js, stream, durable, o->subject ? o->subject : "ringtap.>", &sub);
	if (ret)
		goto out;
	/* A consumer that delivered before: what this run reads continues its files. */
	if (js_GetConsumerInfo(&ci, js, stream, durable, NULL, &jerr) == NATS_OK) {
		col.resumed = ci->Delivered.Stream > 0 || ci->AckFloor.Stream > 0;
		ack_floor = ci->AckFloor.Stream;
	}
	jsConsumerInfo_Destroy(ci);
	ci = NULL;
	cons.js = js;
	cons.durable = durable;
	ret = load_unacked(&cons, outdir, ack_floor) ?: open_descriptions(&col, outdir, durable);
	if (ret)
		goto out;
	if (col.resumed)
		fprintf(stderr, "ringtap collect: consumer %s resumes where it stopped\n", durable);
	ret = consume(sub, &cons, &col, o, &first, &last);
	ret = finish(&cons, &col, o, ret);
	if (o->lag)
		fprintf(stderr, "ringtap collect: %" PRIu64 " records in %.2f s from the first to the "
			"last: %.0f records/s\n", col.records, last - first,
			last > first ? (double)col.records / (last - first) : 0);
out:
	if (col.descriptions)
		fclose(col.descriptions);
	/* The consumer stays (durable): the next run resumes from it. */
	natsSubscription_Destroy(sub);
	jsCtx_Destroy(js);
	natsConnection_Destroy(nc);
	rt_collector_release(&col);
	rt_unacked_release(&cons.unacked);
	nats_CloseAndWait(1000);
	return ret;
}

static void usage(FILE *f)
{
	fputs("Usage: ringtap collect --nats URL [OPTIONS]\n"
	      "Reads what ringtapd instances publish to NATS JetStream, from the stream's\n"
	      "first message or where the same durable consumer stopped, and writes\n"
	      "DIR/HOST.txt per host: the lines ringtap stream prints, \"# cpu N: lost M\n"
	      "events (kernel|queue)\" where records were lost; and DIR/HOST.dat per host\n"
	      "and boot (HOST.1.dat, ... for later boots), a trace.dat for trace-cmd report.\n"
	      "Prints one status line per host on standard error at the end.\n\n"
	      "      --nats=URL         NATS server(s), e.g. nats://127.0.0.1:4222 or a\n"
	      "                         comma-separated list of a cluster's\n"
	      "      --durable=NAME     the durable consumer (default\n"
	      "                         ringtap-collect-HOST-HASH of DIR): a run resumes\n"
	      "                         where the last one with the same name stopped\n"
	      "  -o, --output=DIR       where the files go (default .)\n"
	      "      --stream=NAME      JetStream stream (default RINGTAP)\n"
	      "      --subject=SUBJECT  only these subjects (default ringtap.>), e.g.\n"
	      "                         ringtap.web1.>\n"
	      "  -n, --count=N          stop after N records\n"
	      "      --seconds=S        stop after S seconds\n"
	      "      --drain            stop once every message the stream held was read\n"
	      "      --text-only        no trace.dat files\n"
	      "      --lag              also print the lag from each record's timestamp,\n"
	      "                         taken as realtime, to its line (bench/fanin)\n"
	      "  -h, --help             this text\n",
	      f);
}

int rt_collect_nats_main(int argc, char **argv)
{
	enum {
		OPT_NATS = 256, OPT_STREAM, OPT_SUBJECT, OPT_SECONDS, OPT_DRAIN, OPT_DURABLE,
		OPT_LAG, OPT_TEXT_ONLY
	};
	static const struct option longopts[] = {
		{ "nats", required_argument, NULL, OPT_NATS },
		{ "output", required_argument, NULL, 'o' },
		{ "stream", required_argument, NULL, OPT_STREAM },
		{ "subject", required_argument, NULL, OPT_SUBJECT },
		{ "count", required_argument, NULL, 'n' },
		{ "seconds", required_argument, NULL, OPT_SECONDS },
		{ "drain", no_argument, NULL, OPT_DRAIN },
		{ "durable", required_argument, NULL, OPT_DURABLE },
		{ "lag", no_argument, NULL, OPT_LAG },
		{ "text-only", no_argument, NULL, OPT_TEXT_ONLY },
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
		case OPT_DURABLE:
			if (!*optarg || strpbrk(optarg, ".*> \t")) {
				fprintf(stderr, "ringtap collect: --durable wants a name without '.', "
					"'*', '>' or spaces\n");
				return 1;
			}
			o.durable = optarg;
			break;
		case OPT_LAG:
			o.lag = true;
			break;
		case OPT_TEXT_ONLY:
			o.text_only = true;
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
