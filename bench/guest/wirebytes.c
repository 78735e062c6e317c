// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rt-guest-wirebytes SOCKET ENCODING: one subscriber to the test event with
 * ENCODING (decoded, raw or fixed) that counts every byte it receives (the
 * frames as they arrive, through the tap) until the daemon ends the stream,
 * and prints "WIRE ENCODING BYTES RECORDS PAGES". Decoded records are read
 * in place and each one's values looked at, as a third party's client would
 * (ringtap_record_view): what its CPU per record measures. decoded-ring: the
 * same decoded reader over ringtapd's page ring (RINGTAP_TRANSPORT_RING, and
 * it fails rather than fall back to the socket); BYTES are then those of the
 * frames the library makes from the ring's pages, what a socket would carry.
 * raw-ring: RAW pages over the ring, RECORDS being the events the pages
 * hold (a reader that costs its own guest CPU little, for measuring what
 * many ring readers cost ringtapd). Events reported lost go to stderr.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ringtap.h"

static void count(void *ctx, const uint8_t *frame, size_t len)
{
	*(uint64_t *)ctx += len;
}

int main(int argc, char **argv)
{
	static const char *const events[] = { "ringtap_test:ringtap_test", NULL };
	struct ringtap_client_opts o = { .events = events, .client_name = "wirebytes", .tap = count };
	struct ringtap_connect_error err;
	struct ringtap_client *c;
	struct ringtap_event ev;
	uint64_t bytes = 0, records = 0, pages = 0, sum = 0, lost = 0;
	bool ring_raw = false;
	int n;

	if (argc != 3)
		return 2;
	o.socket_path = argv[1];
	o.tap_ctx = &bytes;
	if (!strcmp(argv[2], "raw"))
		o.encoding = RINGTAP__ENCODING__RAW;
	else if (!strcmp(argv[2], "fixed"))
		o.encoding = RINGTAP__ENCODING__FIXED;
	else if (!strcmp(argv[2], "decoded-ring"))
		o.transport = RINGTAP_TRANSPORT_RING;
	else if (!strcmp(argv[2], "raw-ring")) {
		o.transport = RINGTAP_TRANSPORT_RING;
		o.encoding = RINGTAP__ENCODING__RAW;
		ring_raw = true;
	}
	if (ringtap_connect(&c, &o, &err)) {
		fprintf(stderr, "%s\n", err.text);
		return 1;
	}
	ringtap_set_record_views(c, true);
	while ((n = ringtap_next(c, &ev, -1)) > 0 && ev.kind != RINGTAP_END) {
		const struct ringtap_record_view *v = ringtap_record_view(c, &ev);

		records += ev.kind == RINGTAP_RECORD || ev.kind == RINGTAP_FIXED;
		pages += ev.kind == RINGTAP_PAGE;
		if (ring_raw && ev.kind == RINGTAP_PAGE)
			records += ev.page_records;
		if (ev.kind == RINGTAP_LOST)
			lost += ev.lost->count;
		/* Every value looked at, as a client that uses them would. */
		for (size_t i = 0; v && i < v->n_fields; i++)
			sum += v->fields[i].kind == RINGTAP_VALUE_UNSIGNED ? v->fields[i].u :
										   v->fields[i].len;
	}
	ringtap_close(c);
	printf("WIRE %s %llu %llu %llu\n", argv[2], (unsigned long long)bytes,
	       (unsigned long long)records, (unsigned long long)pages);
	fprintf(stderr, "value sum %llu lost %llu\n", (unsigned long long)sum,
		(unsigned long long)lost);
	return n < 0;
}
