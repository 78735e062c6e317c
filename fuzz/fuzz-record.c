// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What `ringtap record -o FILE.dat` does with a daemon's RAW stream, from
 * untrusted bytes: delimited frames, as libringtap hands them to the
 * recorder (every frame to the frame tap, the events of those after the
 * Welcome to recording_event), into a trace.dat that is then finished:
 * header texts, format texts, HostTexts, pages and loss reports.
 */
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
static bool take(struct recording *rec, struct rt_consumer *c, Ringtap__Frame *f)
{
	struct ringtap_event ev;
	int ret;

	recording_tap_frame(rec, f);
	if (!c->welcome) {
		if (f->msg_case != RINGTAP__FRAME__MSG_WELCOME ||
		    rt_consumer_welcome(c, f, 1, RINGTAP__ENCODING__RAW)) {
			ringtap__frame__free_unpacked(f, NULL);
			return false;
		}
		return !recording_start(rec, c->welcome->welcome);
	}
	for (ret = rt_consumer_take(c, f, &ev); ret == 1; ret = rt_consumer_next(c, &ev))
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
		Ringtap__Frame *f = NULL;
		size_t used = 0;
		int ret = rt_wire_reader_next(&r, &f);

		if (ret == 0 && off < size) {
			ret = rt_wire_reader_feed(&r, data + off, size - off, &used);
			off += used;
			if (ret >= 0)
				continue;
		}
		if (ret <= 0 || !take(&rec, &c, f))
			break;
	}
	if (c.welcome)
		recording_finish(&rec);
	recording_close(&rec);
	rt_consumer_release(&c);
	rt_wire_reader_release(&r);
	return 0;
}
