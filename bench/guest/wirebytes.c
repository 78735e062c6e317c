// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rt-guest-wirebytes SOCKET ENCODING: one subscriber to the test event with
 * ENCODING (decoded, raw or fixed) that counts every byte it receives (the
 * frames as they arrive, through the tap) until the daemon ends the stream,
 * and prints "WIRE ENCODING BYTES RECORDS PAGES". Decoded records are read
 * in place and each one's values looked at, as a third party's client would
 * (ringtap_record_view): what its CPU per record measures.
 */
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
	uint64_t bytes = 0, records = 0, pages = 0, sum = 0;
	int n;

	if (argc != 3)
		return 2;
	o.socket_path = argv[1];
	o.tap_ctx = &bytes;
	if (!strcmp(argv[2], "raw"))
		o.encoding = RINGTAP__ENCODING__RAW;
	else if (!strcmp(argv[2], "fixed"))
		o.encoding = RINGTAP__ENCODING__FIXED;
	if (ringtap_connect(&c, &o, &err)) {
		fprintf(stderr, "%s\n", err.text);
		return 1;
	}
	ringtap_set_record_views(c, true);
	while ((n = ringtap_next(c, &ev, -1)) > 0 && ev.kind != RINGTAP_END) {
		const struct ringtap_record_view *v = ringtap_record_view(c, &ev);

		records += ev.kind == RINGTAP_RECORD || ev.kind == RINGTAP_FIXED;
		pages += ev.kind == RINGTAP_PAGE;
		/* Every value looked at, as a client that uses them would. */
		for (size_t i = 0; v && i < v->n_fields; i++)
			sum += v->fields[i].kind == RINGTAP_VALUE_UNSIGNED ? v->fields[i].u :
										   v->fields[i].len;
	}
	ringtap_close(c);
	printf("WIRE %s %llu %llu %llu\n", argv[2], (unsigned long long)bytes,
	       (unsigned long long)records, (unsigned long long)pages);
	fprintf(stderr, "value sum %llu\n", (unsigned long long)sum);
	return n < 0;
}
