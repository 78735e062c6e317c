// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What libringtap makes of a daemon's stream, from untrusted bytes: the
 * input is delimited frames; the first must be a Welcome the consumer takes
 * (as ringtap_connect would), the rest go through the consumer, and every
 * event it gives is formatted as text and as JSON.
 */
#include "consumer.h"
#include "format.h"
#include "wire.h"

static void format(const struct rt_consumer *c, const struct ringtap_event *ev)
{
	const Ringtap__Layout *layout = c->welcome->welcome->layout;
	char line[512];

	for (unsigned int flags = 0; flags < 4; flags++) {
		if (ev->kind == RINGTAP_RECORD)
			rt_format_record(line, sizeof(line), flags & 2 ? NULL : layout, ev->cpu,
					 ev->record, ev->schema, flags);
		else if (ev->kind == RINGTAP_LOST)
			rt_format_lost(line, sizeof(line), ev->lost, flags);
		else if (ev->kind == RINGTAP_CPU_STATE)
			rt_format_cpu_state(line, sizeof(line), ev->cpu_state, flags);
	}
}

/* Every event the frame gives; false once the stream is over. */
static bool take(struct rt_consumer *c, Ringtap__Frame *f)
{
	struct ringtap_event ev;
	int ret;

	if (!c->welcome) {
		uint32_t enc = f->msg_case == RINGTAP__FRAME__MSG_WELCOME ? f->welcome->encoding : 0;

		if (rt_consumer_welcome(c, f, 1, (Ringtap__Encoding)enc)) {
			ringtap__frame__free_unpacked(f, NULL);
			return false;
		}
		return true;
	}
	for (ret = rt_consumer_take(c, f, &ev); ret == 1; ret = rt_consumer_next(c, &ev)) {
		if (ev.kind == RINGTAP_END)
			return false;
		format(c, &ev);
	}
	return ret == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rt_wire_reader r;
	struct rt_consumer c = { 0 };
	size_t off = 0;

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
		if (ret <= 0 || !take(&c, f))
			break;
	}
	rt_consumer_release(&c);
	rt_wire_reader_release(&r);
	return 0;
}
