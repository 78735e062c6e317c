// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What `ringtap record -o FILE.dat` does with a daemon's RAW stream, from
 * untrusted bytes: delimited frames, as libringtap hands them to the
 * recorder (every frame to the byte tap, the events of those after the
 * Welcome to recording_event, Pages read in place as with record views),
 * into a trace.dat that is then finished: header texts, format texts,
 * HostTexts, pages and loss reports.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "consumer.h"
#include "recording.h"
#include "wire.h"

/* RAM-backed where there is one: a file per input. */
static const char *path(void)
{
	return access("/dev/shm", W_OK) ? "/tmp/ringtap-fuzz-record.dat" :
					  "/dev/shm/ringtap-fuzz-record.dat";
}

/* false once the recording or the stream is over. */
static bool take(struct recording *rec, struct rt_consumer *c, struct rt_wire_reader *r,
		 const uint8_t *payload, size_t len)
{
	struct ringtap_event ev;
	Ringtap__Frame *f = NULL;
	const uint8_t *frame;
	size_t frame_len;
	int ret;

	/* libringtap's order: the tap sees the frame once it is whole, before it is taken. */
	frame = rt_wire_reader_last(r, &frame_len);
	if (frame)
		recording_tap_bytes(rec, frame, frame_len);
	if (!c->welcome) {
		if (rt_wire_unpack(r, payload, len, &f) < 0)
			return false;
		if (f->msg_case != RINGTAP__FRAME__MSG_WELCOME ||
		    rt_consumer_welcome(c, f, 1, RINGTAP__ENCODING__RAW)) {
			ringtap__frame__free_unpacked(f, NULL);
			return false;
		}
		return !recording_start(rec, c->welcome->welcome);
	}
	ret = rt_consumer_take_in_place(c, payload, len, &ev);
	if (ret == -ENOMSG) {
		if (rt_wire_unpack(r, payload, len, &f) < 0)
			return false;
		ret = rt_consumer_take(c, f, &ev);
	}
	for (; ret == 1; ret = rt_consumer_next(c, &ev))
		if (ev.kind == RINGTAP_END || !recording_event(rec, &ev))
			return false;
	return ret == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rt_wire_reader r;
	struct rt_consumer c = { 0 };
	struct recording rec;
	size_t off = 0;

	static FILE *quiet;

	/* The recording's reports would drown the fuzzer's own. */
	if (!quiet && !(quiet = fopen("/dev/null", "w")))
		abort();
	if (recording_open(&rec, path(), true))
		return 0;
	rec.msgs = quiet;
	rt_wire_reader_init(&r, 1u << 20);
	for (;;) {
		const uint8_t *payload;
		size_t used = 0, len;
		int ret = rt_wire_reader_take(&r, &payload, &len);

		if (ret == 0 && off < size) {
			ret = rt_wire_reader_feed(&r, data + off, size - off, &used);
			off += used;
			if (ret >= 0)
				continue;
		}
		if (ret <= 0 || !take(&rec, &c, &r, payload, len))
			break;
	}
	if (c.welcome)
		recording_finish(&rec);
	recording_close(&rec);
	rt_consumer_release(&c);
	rt_wire_reader_release(&r);
	return 0;
}
