// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rt-guest-latency SOCKET SECONDS [ring]: one decoded subscriber to the test
 * event for SECONDS (with "ring": a reader of ringtapd's page ring, decoding
 * the pages itself); each record's age when the client gets it, against
 * CLOCK_MONOTONIC (ringtapd runs with -C mono, so record timestamps are on
 * that clock). Prints "LATENCY N p50_us p99_us max_us".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ringtap.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const char *const events[] = { "ringtap_test:ringtap_test", NULL };
	struct ringtap_client_opts o = { .events = events, .client_name = "latency" };
	struct ringtap_connect_error err;
	struct ringtap_client *c;
	struct ringtap_event ev;
	uint64_t *lat, end, n = 0, cap = 1 << 20;

	if (argc != 3 && !(argc == 4 && !strcmp(argv[3], "ring")))
		return 2;
	o.socket_path = argv[1];
	if (argc == 4)
		o.transport = RINGTAP_TRANSPORT_RING;
	lat = malloc(cap * sizeof(*lat));
	if (!lat || ringtap_connect(&c, &o, &err)) {
		fprintf(stderr, "%s\n", lat ? err.text : "out of memory");
		return 1;
	}
	printf("latency: subscribed\n");
	fflush(stdout);
	end = mono_ns() + (uint64_t)atoi(argv[2]) * 1000000000;
	while (mono_ns() < end) {
		int got = ringtap_next(c, &ev, 100);

		if (got < 0 || (got > 0 && ev.kind == RINGTAP_END))
			break;
		if (got > 0 && ev.kind == RINGTAP_RECORD && n < cap) {
			uint64_t now = mono_ns(), ts = ev.record->timestamp;

			lat[n++] = now > ts ? now - ts : 0;
		}
	}
	ringtap_close(c);
	if (!n) {
		printf("LATENCY 0 0 0 0\n");
		return 1;
	}
	qsort(lat, n, sizeof(*lat), cmp);
	printf("LATENCY %llu %llu %llu %llu\n", (unsigned long long)n,
	       (unsigned long long)(lat[n / 2] / 1000), (unsigned long long)(lat[n * 99 / 100] / 1000),
	       (unsigned long long)(lat[n - 1] / 1000));
	free(lat);
	return 0;
}
