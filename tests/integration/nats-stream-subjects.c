// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nats-stream-subjects URL STREAM SUBJECT...: sets a JetStream stream's
 * subjects, as another daemon's concurrent update of a shared stream would
 * (its read came before our subject was added, its write after).
 */
#include <stdio.h>
#include <stdlib.h>

#include <nats/nats.h>

int main(int argc, char **argv)
{
	natsConnection *nc = NULL;
	jsStreamInfo *si = NULL;
	jsErrCode jerr = 0;
	jsCtx *js = NULL;
	jsStreamConfig cfg;
	natsStatus s;

	if (argc < 4) {
		fprintf(stderr, "usage: %s URL STREAM SUBJECT...\n", argv[0]);
		return 2;
	}
	s = natsConnection_ConnectTo(&nc, argv[1]);
	if (s == NATS_OK)
		s = natsConnection_JetStream(&js, nc, NULL);
	if (s == NATS_OK)
		s = js_GetStreamInfo(&si, js, argv[2], NULL, &jerr);
	if (s == NATS_OK) {
		cfg = *si->Config;
		cfg.Subjects = (const char **)&argv[3];
		cfg.SubjectsLen = argc - 3;
		s = js_UpdateStream(NULL, js, &cfg, NULL, &jerr);
	}
	if (s != NATS_OK)
		fprintf(stderr, "%s: %s (JetStream error %d)\n", argv[0],
			nats_GetLastError(NULL) ?: natsStatus_GetText(s), (int)jerr);
	jsStreamInfo_Destroy(si);
	jsCtx_Destroy(js);
	natsConnection_Destroy(nc);
	nats_Close();
	return s == NATS_OK ? 0 : 1;
}
