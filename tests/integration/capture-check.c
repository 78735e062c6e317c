// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rt-guest-capture-check: reads a `ringtap record` capture the way any
 * consumer would, with protobuf and libtraceevent only: the Welcome's
 * header_page, each Schema's format text, then every page walked with
 * kbuffer; a record of an event whose format did not come first makes the
 * capture MALFORMED. Prints what it found:
 *   "frames=F pages=P records=R test_records=T lost=L"
 * and with --seqs, the test source's (cpu, seq) pairs counted: " distinct=D
 * dups=U" (a capture resumed across crashes holds each once).
 * usage: rt-guest-capture-check [--seqs] FILE
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <kbuffer.h>

#include "wire.h"

#define MAX_CPUS 64
#define MAX_SEQ (1u << 24)

/* The test event's (cpu, seq): counted once, or as a duplicate. */
static void note_seq(struct tep_handle *tep, int type, void *data, int size, unsigned char **seen,
		     unsigned long *distinct, unsigned long *dups)
{
	struct tep_event *ev = tep_find_event(tep, type);
	struct tep_record r = { .data = data, .size = size };
	unsigned long long seq, cpu;

	if (!ev || tep_get_field_val(NULL, ev, "seq", &r, &seq, 0) ||
	    tep_get_field_val(NULL, ev, "cpu", &r, &cpu, 0) || cpu >= MAX_CPUS || seq >= MAX_SEQ)
		return;
	if (!seen[cpu] && !(seen[cpu] = calloc(MAX_SEQ, 1)))
		return;
	if (seen[cpu][seq]++)
		(*dups)++;
	else
		(*distinct)++;
}

int main(int argc, char **argv)
{
	struct rt_wire_reader r;
	struct tep_handle *tep = tep_alloc();
	struct kbuffer *kb = NULL;
	unsigned long frames = 0, pages = 0, records = 0, test = 0, lost = 0, unknown = 0;
	uint8_t buf[65536];
	FILE *f;
	size_t n;
	int test_id = -1, bad = 0;
	bool seqs = argc == 3 && !strcmp(argv[1], "--seqs");
	unsigned char *seen[MAX_CPUS] = { 0 };
	unsigned long distinct = 0, dups = 0;

	if (argc != 2 + seqs || !(f = fopen(argv[1 + seqs], "rb"))) {
		fprintf(stderr, "usage: %s [--seqs] FILE\n", argv[0]);
		return 2;
	}
	rt_wire_reader_init(&r, 0);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		size_t off = 0;

		while (off < n) {
			Ringtap__Frame *fr;
			size_t used = 0;
			int ret = rt_wire_reader_feed(&r, buf + off, n - off, &used);

			off += used;
			if (ret < 0) {
				fprintf(stderr, "capture-check: %s\n", rt_wire_strerror(ret));
				return 1;
			}
			while (rt_wire_reader_next(&r, &fr) == 1) {
				frames++;
				if (frames == 1 && fr->msg_case != RINGTAP__FRAME__MSG_WELCOME)
					bad = 1;
				if (fr->msg_case == RINGTAP__FRAME__MSG_WELCOME) {
					const Ringtap__Layout *l = fr->welcome->layout;

					tep_set_long_size(tep, (int)l->long_size);
					tep_set_page_size(tep, (int)l->sub_buffer_size);
					tep_parse_header_page(tep, l->header_page,
							      strlen(l->header_page),
							      (int)l->long_size);
					kb = tep_kbuffer(tep);
				} else if (fr->msg_case == RINGTAP__FRAME__MSG_SCHEMA) {
					const char *fmt = fr->schema->format;

					if (!fmt)
						bad = 1;
					else
						tep_parse_event(tep, fmt, strlen(fmt), fr->schema->system);
					if (!strcmp(fr->schema->name, "ringtap_test"))
						test_id = (int)fr->schema->event_id;
				} else if (fr->msg_case == RINGTAP__FRAME__MSG_PAGES && kb) {
					for (size_t i = 0; i < fr->pages->n_pages; i++) {
						uint8_t *page = calloc(1, fr->pages->pages[i].len + 64);
						unsigned long long ts;
						void *rec;

						memcpy(page, fr->pages->pages[i].data,
						       fr->pages->pages[i].len);
						pages++;
						kbuffer_load_subbuffer(kb, page);
						for (rec = kbuffer_read_event(kb, &ts); rec;
						     rec = kbuffer_next_event(kb, &ts)) {
							int type = tep_data_type(tep, &(struct tep_record){
								.data = rec,
								.size = kbuffer_event_size(kb) });

							records++;
							test += type == test_id;
							if (seqs && type == test_id)
								note_seq(tep, type, rec, kbuffer_event_size(kb),
									 seen, &distinct, &dups);
							/* Every event in a page has its format first. */
							unknown += !tep_find_event(tep, type);
						}
						free(page);
					}
				} else if (fr->msg_case == RINGTAP__FRAME__MSG_LOST) {
					lost += fr->lost->count;
				}
				ringtap__frame__free_unpacked(fr, NULL);
			}
		}
	}
	fclose(f);
	rt_wire_reader_release(&r);
	if (unknown)
		bad = 1;
	printf("frames=%lu pages=%lu records=%lu test_records=%lu lost=%lu", frames, pages,
	       records, test, lost);
	if (seqs)
		printf(" distinct=%lu dups=%lu", distinct, dups);
	printf("%s\n", bad ? " MALFORMED" : "");
	if (unknown)
		fprintf(stderr, "capture-check: %lu records of events that had no Schema before\n",
			unknown);
	kbuffer_free(kb);
	tep_free(tep);
	return bad;
}
