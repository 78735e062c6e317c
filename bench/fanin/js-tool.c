// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rt-fanin-js: what bench/fanin and the fault test ask of JetStream besides
 * ringtap itself.
 *   create URLS STREAM SUBJECT REPLICAS DUPLICATES_S   a stream (file storage)
 *   info URLS STREAM                                    its messages and bytes
 *   ceiling URLS SUBJECT SIZE COUNT SECONDS              a plain async publisher of
 *       COUNT messages of SIZE bytes (each with a Nats-Msg-Id, as ringtapd's), at
 *       most SECONDS: JetStream's own rate on this machine, measured in the same run
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nats/nats.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fail(const char *what, natsStatus s, jsErrCode jerr)
{
	fprintf(stderr, "rt-fanin-js %s: %s (JetStream error %d)\n", what,
		nats_GetLastError(NULL) ?: natsStatus_GetText(s), (int)jerr);
	return 1;
}

static natsStatus connect(const char *urls, natsConnection **nc, jsCtx **js, jsOptions *jo)
{
	natsOptions *o = NULL;
	natsStatus s = natsOptions_Create(&o);
	char *copy = strdup(urls), *save = NULL;
	const char *servers[16];
	int n = 0;

	for (char *t = strtok_r(copy, ",", &save); t && n < 16; t = strtok_r(NULL, ",", &save))
		servers[n++] = t;
	if (s == NATS_OK)
		s = natsOptions_SetServers(o, servers, n);
	if (s == NATS_OK)
		s = natsOptions_SetMaxReconnect(o, -1);
	if (s == NATS_OK)
		s = natsConnection_Connect(nc, o);
	if (s == NATS_OK)
		s = natsConnection_JetStream(js, *nc, jo);
	natsOptions_Destroy(o);
	free(copy);
	return s;
}

static int create(jsCtx *js, char **argv)
{
	const char *subjects[] = { argv[4] };
	jsStreamConfig cfg;
	jsErrCode jerr = 0;
	natsStatus s;

	jsStreamConfig_Init(&cfg);
	cfg.Name = argv[3];
	cfg.Subjects = subjects;
	cfg.SubjectsLen = 1;
	cfg.Storage = js_FileStorage;
	cfg.Replicas = atoi(argv[5]);
	cfg.Duplicates = (int64_t)atoi(argv[6]) * 1000000000LL;
	/* A cluster that has just formed may not know every peer yet: up to 20 s. */
	for (int i = 0; i < 100; i++) {
		jerr = 0;
		s = js_AddStream(NULL, js, &cfg, NULL, &jerr);
		if (s == NATS_OK)
			return 0;
		nats_Sleep(200);
	}
	return fail("create", s, jerr);
}

static int info(jsCtx *js, char **argv)
{
	jsStreamInfo *si = NULL;
	jsErrCode jerr = 0;
	natsStatus s = js_GetStreamInfo(&si, js, argv[3], NULL, &jerr);

	if (s != NATS_OK)
		return fail("info", s, jerr);
	printf("stream %s: %" PRIu64 " messages, %" PRIu64 " bytes, replicas %" PRId64 "\n", argv[3],
	       si->State.Msgs, si->State.Bytes, (int64_t)si->Config->Replicas);
	jsStreamInfo_Destroy(si);
	return 0;
}

static int ceiling(jsCtx *js, char **argv)
{
	size_t size = strtoul(argv[4], NULL, 10);
	long count = atol(argv[5]);
	double seconds = atof(argv[6]), start = now_s(), took;
	char *payload = calloc(1, size ? size : 1), id[64];
	jsPubOptions po;
	natsStatus s = NATS_OK;
	long sent = 0;

	jsPubOptions_Init(&po);
	po.MsgId = id;
	for (; sent < count && now_s() < start + seconds; sent++) {
		snprintf(id, sizeof(id), "ceiling.%ld.%ld", (long)start, sent);
		s = js_PublishAsync(js, argv[3], payload, (int)size, &po);
		if (s != NATS_OK)
			break;
	}
	jsPubOptions_Init(&po);
	po.MaxWait = 60000;
	if (s == NATS_OK)
		s = js_PublishAsyncComplete(js, &po);
	took = now_s() - start;
	free(payload);
	if (s != NATS_OK)
		return fail("ceiling", s, 0);
	printf("ceiling: %ld messages of %zu bytes in %.2f s: %.0f messages/s, %.0f bytes/s\n", sent,
	       size, took, (double)sent / took, (double)sent * (double)size / took);
	return 0;
}

int main(int argc, char **argv)
{
	natsConnection *nc = NULL;
	jsCtx *js = NULL;
	jsOptions jo;
	natsStatus s;
	int ret;

	if (argc < 4 || (!strcmp(argv[1], "create") && argc < 7) ||
	    (!strcmp(argv[1], "ceiling") && argc < 7)) {
		fprintf(stderr, "usage: see bench/fanin/js-tool.c\n");
		return 2;
	}
	jsOptions_Init(&jo);
	jo.PublishAsync.MaxPending = 4096;
	/* A full window waits for room: the ceiling is the rate JetStream takes. */
	jo.PublishAsync.StallWait = 30000;
	s = connect(argv[2], &nc, &js, &jo);
	if (s != NATS_OK)
		return fail("connect", s, 0);
	if (!strcmp(argv[1], "create"))
		ret = create(js, argv);
	else if (!strcmp(argv[1], "info"))
		ret = info(js, argv);
	else if (!strcmp(argv[1], "ceiling"))
		ret = ceiling(js, argv);
	else
		ret = 2;
	jsCtx_Destroy(js);
	natsConnection_Destroy(nc);
	nats_Close();
	return ret;
}
