// SPDX-License-Identifier: LGPL-2.1-or-later
#include <inttypes.h>

#include <event-parse.h>
#include <trace-seq.h>

#include "text.h"

static void put_string(struct trace_seq *s, const uint8_t *p, unsigned int len)
{
	for (unsigned int i = 0; i < len && p[i]; i++) {
		if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\')
			trace_seq_putc(s, (char)p[i]);
		else
			trace_seq_printf(s, "\\x%02x", p[i]);
	}
}

static void put_int(struct trace_seq *s, const struct tep_event *ev, const uint8_t *p,
		    unsigned int size, bool is_signed)
{
	uint64_t v = tep_read_number(ev->tep, p, (int)size);

	if (!is_signed)
		trace_seq_printf(s, "%" PRIu64, v);
	else if (size == 1)
		trace_seq_printf(s, "%d", (int8_t)v);
	else if (size == 2)
		trace_seq_printf(s, "%d", (int16_t)v);
	else if (size == 4)
		trace_seq_printf(s, "%d", (int32_t)v);
	else
		trace_seq_printf(s, "%" PRId64, (int64_t)v);
}

static bool int_size(unsigned int size)
{
	return size == 1 || size == 2 || size == 4 || size == 8;
}

static void put_elements(struct trace_seq *s, const struct tep_event *ev,
			 const struct tep_format_field *f, const uint8_t *p, unsigned int len)
{
	unsigned int esize = f->elementsize ? f->elementsize : 1;

	trace_seq_putc(s, '{');
	if (!int_size(esize))
		esize = 1;
	for (unsigned int i = 0; i + esize <= len; i += esize) {
		if (i)
			trace_seq_putc(s, ',');
		put_int(s, ev, p + i, esize, f->flags & TEP_FIELD_IS_SIGNED);
	}
	trace_seq_putc(s, '}');
}

static void put_field(struct trace_seq *s, const struct rt_record *rec,
		      const struct tep_format_field *f)
{
	const uint8_t *p;
	unsigned int len;

	if (rt_record_field_bytes(rec, f, &p, &len)) {
		trace_seq_puts(s, "<out of record>");
		return;
	}
	if (f->flags & TEP_FIELD_IS_STRING) {
		put_string(s, p, len);
	} else if (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) {
		put_elements(s, rec->event, f, p, len);
	} else if (f->flags & TEP_FIELD_IS_POINTER && int_size(len)) {
		uint64_t addr = tep_read_number(rec->event->tep, p, (int)len);
		const char *sym = tep_find_function(rec->event->tep, addr);

		trace_seq_printf(s, "0x%" PRIx64, addr);
		if (sym)
			trace_seq_printf(s, "<%s>", sym);
	} else if (int_size(len)) {
		put_int(s, rec->event, p, len, f->flags & TEP_FIELD_IS_SIGNED);
	} else {
		put_elements(s, rec->event, f, p, len);
	}
}

void rt_record_text(struct trace_seq *s, const struct rt_record *rec,
		    const struct rt_layout *layout, unsigned int flags)
{
	const struct rt_field_desc *pid = layout->common_pid;
	uint64_t v;

	if (!(flags & RT_TEXT_NO_TIME))
		trace_seq_printf(s, "%" PRIu64 ".%09" PRIu64 " ", rec->timestamp / 1000000000,
				 rec->timestamp % 1000000000);
	trace_seq_printf(s, "[%03u] ", rec->cpu);
	if (!rec->event) {
		trace_seq_printf(s, "unknown event id %u, %u bytes", rec->type, rec->size);
		return;
	}
	trace_seq_printf(s, "%s:%s", rec->event->system, rec->event->name);
	if (pid && !rt_record_read_common(rec, layout, pid, &v))
		trace_seq_printf(s, " pid=%d", (int)(int32_t)v);
	for (struct tep_format_field *f = rec->event->format.fields; f; f = f->next) {
		trace_seq_printf(s, " %s=", f->name);
		put_field(s, rec, f);
	}
	if (flags & RT_TEXT_COMMON) {
		trace_seq_puts(s, " |");
		for (unsigned int i = 0; i < layout->n_common; i++) {
			if (rt_record_read_common(rec, layout, &layout->common[i], &v))
				continue;
			trace_seq_printf(s, " %s=%" PRIu64, layout->common[i].name, v);
		}
	}
}
