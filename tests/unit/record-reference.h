/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * record-reference: what the Record of a decoded record must hold, built
 * the slow and obvious way (each field of the format read through
 * decode.h, a protobuf-c message filled in and packed), for test-encode
 * and fuzz-page to hold the encoder's hand-written bytes against.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "decode.h"
#include "encode.h"
#include "ringtap.pb-c.h"
#include "wire.h"

struct reference {
	Ringtap__Record rec;
	Ringtap__Value *vals;
	Ringtap__Value **ptrs;
	char **texts;		/* NUL-terminated copies of string values */
	size_t n;
};

static inline bool reference_ascii(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] & 0x80)
			return false;
	return true;
}

/* One field's Value, typed as the format says. */
static inline void reference_field(struct reference *r, size_t i, const struct rt_record *rec,
				   const struct rt_layout *l, const struct tep_format_field *f)
{
	Ringtap__Value *v = &r->vals[i];
	const uint8_t *p;
	unsigned int len;

	ringtap__value__init(v);
	v->v_case = RINGTAP__VALUE__V_RAW;
	if (rt_record_field_bytes(rec, f, &p, &len))
		return;		/* outside the record: empty bytes */
	if (f->flags & TEP_FIELD_IS_STRING) {
		const uint8_t *nul = memchr(p, 0, len);
		size_t n = nul ? (size_t)(nul - p) : len;

		if (reference_ascii(p, n)) {
			r->texts[i] = strndup((const char *)p, n);
			v->v_case = RINGTAP__VALUE__V_STR;
			v->str = r->texts[i];
			return;
		}
		v->raw.data = (uint8_t *)p;
		v->raw.len = n;
		return;
	}
	if (!(f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) &&
	    (len == 1 || len == 2 || len == 4 || len == 8)) {
		uint64_t u = rt_layout_read_uint(l, p, len);
		unsigned int shift = 64 - 8 * len;

		if (f->flags & TEP_FIELD_IS_SIGNED) {
			v->v_case = RINGTAP__VALUE__V_S;
			v->s = (int64_t)(u << shift) >> shift;
		} else {
			v->v_case = RINGTAP__VALUE__V_U;
			v->u = u;
			if (f->flags & TEP_FIELD_IS_POINTER)
				v->symbol = (char *)tep_find_function(rec->event->tep, u);
		}
		return;
	}
	v->raw.data = (uint8_t *)p;
	v->raw.len = len;
}

/* The Record for rec, packed as Batch.records holds it (tag, length, bytes); the caller frees. */
static inline uint8_t *reference_record(const struct rt_record *rec, const struct rt_layout *l,
					bool common, const char *const *only, size_t *out_len)
{
	struct reference r = { 0 };
	uint8_t tmp[1 + RT_WIRE_VARINT_MAX], *out = NULL;
	size_t nf = 0, k = 0, size, head;
	uint64_t pid = 0;

	ringtap__record__init(&r.rec);
	for (struct tep_format_field *f = rec->event->format.fields; f; f = f->next)
		nf += rt_encode_selected(only, f->name);
	r.n = nf + (common ? l->n_common : 0);
	r.vals = calloc(r.n + 1, sizeof(*r.vals));
	r.ptrs = calloc(r.n + 1, sizeof(*r.ptrs));
	r.texts = calloc(r.n + 1, sizeof(*r.texts));
	if (!r.vals || !r.ptrs || !r.texts)
		goto out;
	for (struct tep_format_field *f = rec->event->format.fields; f; f = f->next)
		if (rt_encode_selected(only, f->name))
			reference_field(&r, k++, rec, l, f);
	for (unsigned int c = 0; common && c < l->n_common; c++, k++) {
		uint64_t u = 0;

		ringtap__value__init(&r.vals[k]);
		r.vals[k].v_case = RINGTAP__VALUE__V_U;
		if (!rt_record_read_common(rec, l, &l->common[c], &u))
			r.vals[k].u = u;
	}
	for (size_t i = 0; i < r.n; i++)
		r.ptrs[i] = &r.vals[i];
	if (l->common_pid && !rt_record_read_common(rec, l, l->common_pid, &pid))
		r.rec.pid = (int32_t)pid;
	r.rec.timestamp = rec->timestamp;
	r.rec.event_id = rec->type;
	r.rec.n_fields = nf;
	r.rec.fields = r.ptrs;
	r.rec.n_common = r.n - nf;
	r.rec.common = r.ptrs + nf;
	size = ringtap__record__get_packed_size(&r.rec);
	tmp[0] = (2 << 3) | 2;
	head = 1 + rt_wire_varint_encode(size, tmp + 1);
	out = malloc(head + size);
	if (out) {
		memcpy(out, tmp, head);
		ringtap__record__pack(&r.rec, out + head);
		*out_len = head + size;
	}
out:
	for (size_t i = 0; r.texts && i < r.n; i++)
		free(r.texts[i]);
	free(r.texts);
	free(r.ptrs);
	free(r.vals);
	return out;
}
