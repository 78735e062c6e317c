// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rt-guest-legacy-reader: a tool written the way PowerTOP 1.x was. It knows
 * the 2012 kernels' event layout by heart: the 12-byte common header, then
 * the test event's fields at padded-2012.h's offsets. It learns only the
 * event's id, from the Schema.
 *
 *   fixed: takes ringtapd's FIXED encoding (padded-2012): right on every kernel
 *   raw:   walks the raw sub-buffers itself (kbuffer: the page format did not
 *          change): right only where the kernel's layout happens to match
 *
 * Reads until the daemon closes, then prints "N events, R read right, W wrong".
 * usage: rt-guest-legacy-reader fixed|raw SOCKET
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kbuffer.h>

#include "padded-2012.h"
#include "ringtap.h"

static unsigned long events, right, wrong;
static int test_id = -1;

/* The test source's content is known: is what the old offsets gave it? */
static void check(const uint8_t *rec, unsigned int size)
{
	uint16_t type;
	uint64_t seq;
	uint32_t cpu, loc;
	char tag[9] = "", msg[64] = "", want[64];
	unsigned int off, len;

	if (size < PADDED_2012_FIXED_SIZE)
		return;
	memcpy(&type, rec + PADDED_2012_TYPE_AT, 2);
	if (type != test_id)
		return;
	events++;
	memcpy(&seq, rec + PADDED_2012_SEQ_AT, 8);
	memcpy(&cpu, rec + PADDED_2012_CPU_AT, 4);
	memcpy(tag, rec + PADDED_2012_TAG_AT, PADDED_2012_TAG_SIZE);
	memcpy(&loc, rec + PADDED_2012_MSG_AT, 4);
	off = loc & 0xffff;
	len = loc >> 16;
	if (off + len <= size && len < sizeof(msg))
		memcpy(msg, rec + off, len);
	snprintf(want, sizeof(want), "cpu%u seq %llu %.*s", cpu, (unsigned long long)seq,
		 (int)(seq % 8), "xxxxxxxx");
	if (!strcmp(tag, "rtaptest") && !strcmp(msg, want))
		right++;
	else
		wrong++;
}

int main(int argc, char **argv)
{
	static const char *const events_wanted[] = { "ringtap_test:ringtap_test", NULL };
	struct ringtap_client_opts opts = { .events = events_wanted, .client_name = "legacy" };
	struct ringtap_connect_error err;
	struct ringtap_client *c;
	struct kbuffer *kb = NULL;
	struct ringtap_event ev;
	bool raw;

	if (argc != 3 || (strcmp(argv[1], "fixed") && strcmp(argv[1], "raw"))) {
		fprintf(stderr, "usage: %s fixed|raw SOCKET\n", argv[0]);
		return 2;
	}
	raw = !strcmp(argv[1], "raw");
	opts.socket_path = argv[2];
	opts.encoding = raw ? RINGTAP__ENCODING__RAW : RINGTAP__ENCODING__FIXED;
	if (ringtap_connect(&c, &opts, &err)) {
		fprintf(stderr, "legacy-reader: %s\n", err.text);
		return 1;
	}
	if (raw)
		kb = kbuffer_alloc(ringtap_welcome(c)->layout->long_size == 8 ? KBUFFER_LSIZE_8 :
										 KBUFFER_LSIZE_4,
				   KBUFFER_ENDIAN_LITTLE);
	while (ringtap_next(c, &ev, -1) == 1 && ev.kind != RINGTAP_END) {
		if (test_id < 0) {
			const Ringtap__Schema *s = ringtap_find_schema(c, "ringtap_test",
								       "ringtap_test");

			if (s)
				test_id = (int)s->event_id;
		}
		if (ev.kind == RINGTAP_FIXED) {
			check(ev.fixed->data.data, (unsigned int)ev.fixed->data.len);
		} else if (ev.kind == RINGTAP_PAGE) {
			/* kbuffer reads the page in place: give it a copy it may keep. */
			uint8_t *page = calloc(1, ev.page->len + 64);
			unsigned long long ts;
			void *rec;

			memcpy(page, ev.page->data, ev.page->len);
			kbuffer_load_subbuffer(kb, page);
			for (rec = kbuffer_read_event(kb, &ts); rec; rec = kbuffer_next_event(kb, &ts))
				check(rec, (unsigned int)kbuffer_event_size(kb));
			free(page);
		}
	}
	printf("legacy-reader %s: %lu events, %lu read right, %lu wrong\n", argv[1], events, right,
	       wrong);
	kbuffer_free(kb);
	ringtap_close(c);
	return 0;
}
