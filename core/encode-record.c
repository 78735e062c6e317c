// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Records as protocol bytes: a plan compiled once per event and way of
 * sending, run over each record; and a record in the FIXED encoding. The
 * frames around them are encode.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "encode.h"

/* A Batch's (and a Fixed's) records: field 2, length-delimited. */
#define TAG_BATCH_RECORDS	((2 << 3) | 2)

/*
 * Records are the daemon's hot path. Each event's format is compiled once,
 * the first time a record of it comes, into a plan: one step per field sent
 * (a projection's fields only, then the common fields when asked), saying
 * where the field is, how to read it and how it goes on the wire. A record
 * is then read and written in two short passes over the steps, sizes first,
 * bytes second, straight into the caller's buffer: the bytes protobuf-c
 * would give for the Record message (test-encode checks every fixture
 * record against protobuf-c's pack, fuzz-page every input it finds),
 * without building the message or walking the format.
 */
enum { VAL_S = 1, VAL_U = 2, VAL_STR = 3, VAL_RAW = 4, VAL_SYMBOL = 5 };

/* Record fields: timestamp = 1, event_id = 2, pid = 3, fields = 4, common = 5. */
#define TAG_RECORD_FIELD	((4 << 3) | 2)
#define TAG_RECORD_COMMON	((5 << 3) | 2)

enum step_kind {
	STEP_U,		/* an unsigned number of 1, 2, 4 or 8 bytes */
	STEP_S,		/* a signed one, sign-extended to 64 bits */
	STEP_PTR,	/* an unsigned one with the kernel symbol it points into */
	STEP_STR,	/* text up to its NUL: a string when ASCII, bytes otherwise */
	STEP_BYTES,	/* bytes as they are */
};

/*
 * The same numbers loaded straight from a record in the host's byte order, for
 * records long enough to hold every fixed field (checked once per record).
 */
enum step_op {
	OP_GENERIC,
	OP_U8, OP_U16, OP_U32, OP_U64,
	OP_S8, OP_S16, OP_S32, OP_S64,
	OP_TEXT,	/* a fixed char array */
	OP_TEXT_LOC,	/* a __data_loc char[] */
};

enum step_where {
	AT_FIXED,	/* offset, len */
	AT_FLEX,	/* from offset to the record's end ("char buf[]") */
	AT_DATA_LOC,	/* a __data_loc word at offset */
	AT_REL_LOC,	/* a __rel_loc word at offset: counted from its end */
};

struct step {
	uint8_t kind, where, tag, op;
	uint8_t size;		/* a number's */
	uint32_t offset, len;
};

struct plan {
	unsigned int n;
	uint32_t fixed_end;	/* a record this long holds every fixed field */
	uint32_t pid_offset, pid_size;	/* the common pid; size 0: none */
	size_t max_size;	/* the most the steps write, but for dynamic bytes */
	unsigned int n_dynamic;	/* steps whose bytes may reach the record's size */
	struct step steps[];
};

/* The most a step writes besides its bytes: tag, length, kind, length or number. */
#define STEP_OVERHEAD		13
/* A kernel symbol's name is at most KSYM_NAME_LEN (512) bytes. */
#define SYMBOL_MAX		(3 + 512)
/* Record's own fields: three tags and timestamp, event id and pid varints. */
#define RECORD_HEAD_MAX		(3 + 10 + 10 + 10)

struct rt_record_encoder {
	const struct rt_layout *layout;
	bool common;
	bool numbered;		/* Record.seq goes with each record that has one */
	char **only;		/* NULL-terminated copy; NULL: every field */
	struct plan **plans;	/* by kernel event id; NULL: not compiled yet */
	size_t n_plans;
};

static size_t varint_size(uint64_t v)
{
	/* 1 + (index of the highest set bit) / 7, without a loop. */
	return ((unsigned int)(64 - __builtin_clzll(v | 1)) * 9 + 64) / 64;
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static uint8_t *put_bytes(uint8_t *p, unsigned int tag, const void *data, size_t len)
{
	*p++ = (uint8_t)tag;
	p = put_varint(p, len);
	if (len)	/* an empty value may have no bytes at all (NULL) */
		memcpy(p, data, len);
	return p + len;
}

/* How one field of the format is read and sent, decided once. */
static void compile_step(const struct tep_format_field *f, struct step *st)
{
	bool dynamic = f->flags & TEP_FIELD_IS_DYNAMIC;

	*st = (struct step){ .kind = STEP_BYTES, .tag = TAG_RECORD_FIELD, .where = AT_FIXED };
	st->offset = f->offset < 0 ? UINT32_MAX : (uint32_t)f->offset;
	st->len = f->size < 0 ? UINT32_MAX : (uint32_t)f->size;
	if (dynamic) {
		/* A location word is 4 bytes; any other size leaves the field unread. */
		st->where = f->size != 4 ? AT_FIXED : (f->flags & TEP_FIELD_IS_RELATIVE) ?
						      AT_REL_LOC : AT_DATA_LOC;
		if (f->size != 4)
			st->len = UINT32_MAX;
	} else if (!f->size && (f->flags & TEP_FIELD_IS_ARRAY)) {
		st->where = AT_FLEX;
	}
	if (f->flags & TEP_FIELD_IS_STRING) {
		st->kind = STEP_STR;
	} else if (!(f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) &&
		   (f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8)) {
		st->size = (uint8_t)f->size;
		st->kind = (f->flags & TEP_FIELD_IS_SIGNED) ? STEP_S :
			   (f->flags & TEP_FIELD_IS_POINTER) ? STEP_PTR : STEP_U;
	}
}

static struct plan *compile(struct rt_record_encoder *e, const struct tep_event *ev)
{
	const struct rt_layout *l = e->layout;
	bool host_order = rt_layout_host_order(l);
	unsigned int n = 0, i = 0;
	struct plan *plan;

	for (struct tep_format_field *f = ev->format.fields; f; f = f->next)
		n += rt_encode_selected((const char *const *)e->only, f->name);
	if (e->common)
		n += l->n_common;
	plan = malloc(sizeof(*plan) + n * sizeof(plan->steps[0]));
	if (!plan)
		return NULL;
	for (struct tep_format_field *f = ev->format.fields; f; f = f->next)
		if (rt_encode_selected((const char *const *)e->only, f->name))
			compile_step(f, &plan->steps[i++]);
	for (unsigned int c = 0; e->common && c < l->n_common; c++)
		plan->steps[i++] = (struct step){
			.kind = STEP_U, .where = AT_FIXED, .tag = TAG_RECORD_COMMON,
			/* Sizes past 8 bytes read as nothing: sent as 0, as before. */
			.size = (uint8_t)(l->common[c].size <= 8 ? l->common[c].size : 0),
			.offset = l->common[c].offset, .len = l->common[c].size,
		};
	plan->n = n;
	plan->max_size = RECORD_HEAD_MAX;
	plan->n_dynamic = 0;
	for (i = 0; i < n; i++) {
		const struct step *st = &plan->steps[i];

		plan->max_size += STEP_OVERHEAD + (st->kind == STEP_PTR ? SYMBOL_MAX : 0);
		if (st->where != AT_FIXED)
			plan->n_dynamic++;
		else if (st->kind == STEP_STR || st->kind == STEP_BYTES)
			plan->max_size += st->len == UINT32_MAX ? 0 : st->len;
	}
	plan->fixed_end = 0;
	for (i = 0; i < n; i++) {
		struct step *st = &plan->steps[i];
		static const uint8_t ops[2][9] = {
			{ 0, OP_U8, OP_U16, 0, OP_U32, 0, 0, 0, OP_U64 },
			{ 0, OP_S8, OP_S16, 0, OP_S32, 0, 0, 0, OP_S64 },
		};

		if (host_order && st->kind == STEP_STR && st->where == AT_DATA_LOC) {
			st->op = OP_TEXT_LOC;
			if ((uint64_t)st->offset + 4 > plan->fixed_end)
				plan->fixed_end = st->offset + 4;
			continue;
		}
		if (st->where != AT_FIXED || st->len == UINT32_MAX)
			continue;
		if (st->kind == STEP_STR)
			st->op = OP_TEXT;
		if ((uint64_t)st->offset + st->len > plan->fixed_end)
			plan->fixed_end = st->offset + st->len;
		if (host_order && (st->kind == STEP_U || st->kind == STEP_S) && st->size)
			st->op = ops[st->kind == STEP_S][st->size];
	}
	plan->pid_offset = l->common_pid ? l->common_pid->offset : 0;
	plan->pid_size = l->common_pid && l->common_pid->size <= 8 ? l->common_pid->size : 0;
	return plan;
}

static __attribute__((noinline)) struct plan *plan_new(struct rt_record_encoder *e,
						       const struct rt_record *rec)
{
	size_t id = rec->type;

	if (id >= e->n_plans) {
		size_t n = id + 64;
		struct plan **grown = realloc(e->plans, n * sizeof(*grown));

		if (!grown)
			return NULL;
		memset(grown + e->n_plans, 0, (n - e->n_plans) * sizeof(*grown));
		e->plans = grown;
		e->n_plans = n;
	}
	e->plans[id] = compile(e, rec->event);
	return e->plans[id];
}

/* The event's plan: found inline, compiled out of line the first time. */
static inline struct plan *plan_for(struct rt_record_encoder *e, const struct rt_record *rec)
{
	size_t id = rec->type;

	return id < e->n_plans && e->plans[id] ? e->plans[id] : plan_new(e, rec);
}

static bool is_ascii(const uint8_t *p, unsigned int len)
{
	unsigned int i = 0;

	/* A word at a time: every string field of every record passes here. */
	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		if (w & 0x8080808080808080ULL)
			return false;
	}
	for (; i < len; i++)
		if (p[i] & 0x80)
			return false;
	return true;
}

/* Where a step's bytes are in the record; false when they are not inside it. */
static inline bool locate(const struct step *st, const struct rt_record *rec,
			  const struct rt_layout *l, const uint8_t **p, uint32_t *len)
{
	uint32_t start, n;

	if ((uint64_t)st->offset + st->len > rec->size)
		return false;
	switch (st->where) {
	case AT_FIXED:
		*p = rec->data + st->offset;
		*len = st->len;
		return true;
	case AT_FLEX:
		*p = rec->data + st->offset;
		*len = rec->size - st->offset;
		return true;
	default:
		if (!rt_data_loc((uint32_t)rt_layout_read_uint(l, rec->data + st->offset, 4),
				 st->offset, st->where == AT_REL_LOC, rec->size, &start, &n))
			return false;
		*p = rec->data + start;
		*len = n;
		return true;
	}
}

/* Text up to its NUL: its length, and whether it is all ASCII (a protobuf string). */
static inline uint32_t text_len(const uint8_t *p, uint32_t len, bool *ascii)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	uint64_t high = 0;
	uint32_t i = 0;

	/* Long texts through memchr; short ones (comm, tags) a word at a time. */
	if (len > 64) {
		const uint8_t *nul = memchr(p, 0, len);

		len = nul ? (uint32_t)(nul - p) : len;
		*ascii = is_ascii(p, len);
		return len;
	}
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (; i + 8 <= len; i += 8) {
		uint64_t w, zero;

		memcpy(&w, p + i, 8);
		/* The lowest flagged byte is the first NUL (a borrow flags only bytes above it). */
		zero = (w - ones) & ~w & highs;
		if (zero) {
			unsigned int k = (unsigned int)__builtin_ctzll(zero) / 8;

			high |= k ? w & (~0ULL >> (64 - 8 * k)) : 0;
			*ascii = !(high & highs);
			return i + k;
		}
		high |= w;
	}
#endif
	for (; i < len && p[i]; i++)
		high |= p[i];
	*ascii = !(high & highs);
	return i;
}

/* The field tag's entry for a Value{kind: bytes} of len < 126 bytes: every length one byte. */
static inline uint8_t *put_short_bytes_head(uint8_t *p, unsigned int tag, unsigned int kind,
					    uint32_t len)
{
	p[0] = (uint8_t)tag;
	p[1] = (uint8_t)(len + 2);
	p[2] = (uint8_t)((kind << 3) | 2);
	p[3] = (uint8_t)len;
	return p + 4;
}

/* A Value{kind: bytes} of len bytes at p, as the field tag's entry. */
static inline uint8_t *put_bytes_value(uint8_t *p, unsigned int tag, unsigned int kind,
				       const uint8_t *data, uint32_t len)
{
	/* Most texts are short: every length then takes one byte. */
	if (len < 126) {
		put_short_bytes_head(p, tag, kind, len);
		if (len)
			memcpy(p + 4, data, len);
		return p + 4 + len;
	}
	*p++ = (uint8_t)tag;
	p = put_varint(p, 1 + varint_size(len) + len);
	return put_bytes(p, (kind << 3) | 2, data, len);
}

/*
 * A fixed char array's text, the field inside the record: the room for
 * it was reserved at the field's whole size, so whole words are copied as
 * far as the field holds them (a comm's 16 bytes in two moves, not a call
 * to memcpy), the bytes past the text to be written over or left past the
 * end.
 */
static inline uint8_t *put_text_inside(uint8_t *p, unsigned int tag, unsigned int kind,
				       const uint8_t *data, uint32_t len, uint32_t field_len)
{
	uint32_t i = 0;

	if (len >= 126 || field_len < 8)
		return put_bytes_value(p, tag, kind, data, len);
	put_short_bytes_head(p, tag, kind, len);
	for (; i < len && i + 8 <= field_len; i += 8)
		memcpy(p + 4 + i, data + i, 8);
	if (i < len)
		memcpy(p + 4 + i, data + i, len - i);
	return p + 4 + len;
}

/* A Value{kind: number}: its size fits one byte, written once the number is. */
static inline uint8_t *put_number_value(uint8_t *p, unsigned int tag, unsigned int kind,
					uint64_t v)
{
	uint8_t *end;

	p[0] = (uint8_t)tag;
	p[2] = (uint8_t)(kind << 3);
	/* Most numbers (CPUs, priorities, states, small counts) take one byte. */
	if (v < 0x80) {
		p[1] = 2;
		p[3] = (uint8_t)v;
		return p + 4;
	}
	end = put_varint(p + 3, v);
	p[1] = (uint8_t)(end - p - 2);
	return end;
}

/* The same with the kernel symbol the number points into, when there is one. */
static uint8_t *put_pointer_value(uint8_t *p, unsigned int tag, uint64_t v, const char *symbol)
{
	size_t sl = strlen(symbol), inner = 1 + varint_size(v) + 1 + varint_size(sl) + sl;

	*p++ = (uint8_t)tag;
	p = put_varint(p, inner);
	*p++ = (uint8_t)(VAL_U << 3);
	p = put_varint(p, v);
	return put_bytes(p, (VAL_SYMBOL << 3) | 2, symbol, sl);
}

/* A number of a record long enough for it, in the host's order: ops OP_U8 to OP_S64. */
static inline __attribute__((always_inline)) uint64_t load_number(uint8_t op, const uint8_t *at)
{
	uint32_t w;
	uint16_t h;
	uint64_t u;

	switch (op) {
	case OP_U8:
		return at[0];
	case OP_U16:
		memcpy(&h, at, 2);
		return h;
	case OP_U32:
		memcpy(&w, at, 4);
		return w;
	case OP_S8:
		return (uint64_t)(int64_t)(int8_t)at[0];
	case OP_S16:
		memcpy(&h, at, 2);
		return (uint64_t)(int64_t)(int16_t)h;
	case OP_S32:
		memcpy(&w, at, 4);
		return (uint64_t)(int64_t)(int32_t)w;
	default:	/* OP_U64, OP_S64 */
		memcpy(&u, at, 8);
		return u;
	}
}

/* One step: its value read from the record and written at p. */
static inline __attribute__((always_inline)) uint8_t *put_step(uint8_t *p, const struct step *st,
								 const struct rt_record *rec,
								 const struct rt_layout *l,
								 bool fixed_inside)
{
	const uint8_t *at = rec->data + st->offset;
	uint32_t len, w;
	uint64_t u;
	bool ascii;

	if (fixed_inside) {
		switch (st->op) {
		case OP_U8 ... OP_U64:
			return put_number_value(p, st->tag, VAL_U, load_number(st->op, at));
		case OP_S8 ... OP_S64:
			return put_number_value(p, st->tag, VAL_S, load_number(st->op, at));
		case OP_TEXT:
			len = text_len(at, st->len, &ascii);
			return put_text_inside(p, st->tag, ascii ? VAL_STR : VAL_RAW, at, len,
					       st->len);
		case OP_TEXT_LOC:
			memcpy(&w, at, 4);
			if (!rt_data_loc(w, st->offset, false, rec->size, &w, &len))
				return put_bytes_value(p, st->tag, VAL_RAW, NULL, 0);
			at = rec->data + w;
			len = text_len(at, len, &ascii);
			return put_bytes_value(p, st->tag, ascii ? VAL_STR : VAL_RAW, at, len);
		}
	}
	/*
	 * Outside the record: a field is sent as empty bytes rather than
	 * guessed, a common field (always a number) as 0.
	 */
	if (!locate(st, rec, l, &at, &len))
		return st->tag == TAG_RECORD_COMMON ? put_number_value(p, st->tag, VAL_U, 0) :
						      put_bytes_value(p, st->tag, VAL_RAW, NULL, 0);
	switch (st->kind) {
	case STEP_S: {
		unsigned int shift = 64 - 8 * st->size;

		u = rt_layout_read_uint(l, at, st->size);
		return put_number_value(p, st->tag, VAL_S, (uint64_t)((int64_t)(u << shift) >> shift));
	}
	case STEP_U:
		u = st->size ? rt_layout_read_uint(l, at, st->size) : 0;
		return put_number_value(p, st->tag, VAL_U, u);
	case STEP_PTR: {
		/* The name travels with the address: clients cannot read kallsyms. */
		const char *symbol;

		u = rt_layout_read_uint(l, at, st->size);
		symbol = tep_find_function(rec->event->tep, u);
		return symbol ? put_pointer_value(p, st->tag, u, symbol) :
				put_number_value(p, st->tag, VAL_U, u);
	}
	case STEP_STR:
		len = text_len(at, len, &ascii);
		/* protobuf strings are UTF-8: kernel bytes beyond ASCII go as bytes. */
		return put_bytes_value(p, st->tag, ascii ? VAL_STR : VAL_RAW, at, len);
	default:
		return put_bytes_value(p, st->tag, VAL_RAW, at, len);
	}
}

/*
 * One step's value as a DECODED subscriber reads it from what put_step()
 * writes: the same decisions (kind, sign, text or bytes, symbol), taken
 * from the record where it lies. Bytes point into the record.
 */
static inline __attribute__((always_inline)) void view_step(struct rt_value *v,
							     const struct step *st,
							     const struct rt_record *rec,
							     const struct rt_layout *l,
							     bool fixed_inside)
{
	const uint8_t *at = rec->data + st->offset;
	uint32_t len, w;
	uint64_t u;
	bool ascii;

	v->symbol = NULL;
	if (fixed_inside) {
		switch (st->op) {
		case OP_U8 ... OP_U64:
			v->kind = RT_VALUE_UNSIGNED;
			v->u = load_number(st->op, at);
			return;
		case OP_S8 ... OP_S64:
			v->kind = RT_VALUE_SIGNED;
			v->u = load_number(st->op, at);
			return;
		case OP_TEXT:
			v->len = text_len(at, st->len, &ascii);
			v->kind = ascii ? RT_VALUE_TEXT : RT_VALUE_BYTES;
			v->bytes = at;
			return;
		case OP_TEXT_LOC:
			memcpy(&w, at, 4);
			if (!rt_data_loc(w, st->offset, false, rec->size, &w, &len)) {
				*v = (struct rt_value){ .kind = RT_VALUE_BYTES };
				return;
			}
			v->bytes = rec->data + w;
			v->len = text_len(v->bytes, len, &ascii);
			v->kind = ascii ? RT_VALUE_TEXT : RT_VALUE_BYTES;
			return;
		}
	}
	if (!locate(st, rec, l, &at, &len)) {
		*v = st->tag == TAG_RECORD_COMMON ? (struct rt_value){ .kind = RT_VALUE_UNSIGNED } :
						    (struct rt_value){ .kind = RT_VALUE_BYTES };
		return;
	}
	switch (st->kind) {
	case STEP_S: {
		unsigned int shift = 64 - 8 * st->size;

		u = rt_layout_read_uint(l, at, st->size);
		v->kind = RT_VALUE_SIGNED;
		v->s = (int64_t)(u << shift) >> shift;
		return;
	}
	case STEP_U:
		v->kind = RT_VALUE_UNSIGNED;
		v->u = st->size ? rt_layout_read_uint(l, at, st->size) : 0;
		return;
	case STEP_PTR:
		v->kind = RT_VALUE_UNSIGNED;
		v->u = rt_layout_read_uint(l, at, st->size);
		v->symbol = tep_find_function(rec->event->tep, v->u);
		v->symbol_len = v->symbol ? strlen(v->symbol) : 0;
		return;
	case STEP_STR:
		v->len = text_len(at, len, &ascii);
		v->kind = ascii ? RT_VALUE_TEXT : RT_VALUE_BYTES;
		v->bytes = at;
		return;
	default:
		v->kind = RT_VALUE_BYTES;
		v->bytes = at;
		v->len = len;
		return;
	}
}

int rt_record_encoder_view(struct rt_record_encoder *e, const struct rt_record *rec,
			   struct rt_record_view *view, struct rt_value *vals, size_t max)
{
	const struct rt_layout *l = e->layout;
	const struct plan *plan;
	unsigned int n_fields;

	if (!rec->event)
		return -EINVAL;
	plan = plan_for(e, rec);
	if (!plan)
		return -ENOMEM;
	if (plan->n > max)
		return -ENOSPC;
	view->timestamp = rec->timestamp;
	view->seq = rec->seq;
	view->event_id = rec->type;
	view->pid = plan->pid_size && (uint64_t)plan->pid_offset + plan->pid_size <= rec->size ?
		(int32_t)rt_layout_read_uint(l, rec->data + plan->pid_offset, plan->pid_size) : 0;
	if (rec->size >= plan->fixed_end)
		for (unsigned int i = 0; i < plan->n; i++)
			view_step(&vals[i], &plan->steps[i], rec, l, true);
	else
		for (unsigned int i = 0; i < plan->n; i++)
			view_step(&vals[i], &plan->steps[i], rec, l, false);
	n_fields = plan->n - (e->common ? l->n_common : 0);
	view->fields = vals;
	view->n_fields = n_fields;
	view->common = vals + n_fields;
	view->n_common = plan->n - n_fields;
	return 0;
}

int rt_record_encoder_new(struct rt_record_encoder **out, const struct rt_layout *layout,
			  bool common, const char *const *only)
{
	struct rt_record_encoder *e = calloc(1, sizeof(*e));
	size_t n = 0;

	*out = NULL;
	if (!e)
		return -ENOMEM;
	e->layout = layout;
	e->common = common;
	if (only) {
		while (only[n])
			n++;
		e->only = calloc(n + 1, sizeof(*e->only));
		for (size_t i = 0; e->only && i < n; i++)
			if (!(e->only[i] = strdup(only[i]))) {
				rt_record_encoder_free(e);
				return -ENOMEM;
			}
		if (!e->only) {
			free(e);
			return -ENOMEM;
		}
	}
	*out = e;
	return 0;
}

void rt_record_encoder_free(struct rt_record_encoder *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n_plans; i++)
		free(e->plans[i]);
	free(e->plans);
	for (char **p = e->only; p && *p; p++)
		free(*p);
	free(e->only);
	free(e);
}

void rt_record_encoder_set_numbered(struct rt_record_encoder *e, bool numbered)
{
	e->numbered = numbered;
}

bool rt_record_encoder_numbered(const struct rt_record_encoder *e)
{
	return e->numbered;
}

bool rt_record_encoder_is(const struct rt_record_encoder *e, bool common,
			  const char *const *only)
{
	size_t i = 0;

	if (e->common != common || !e->only != !only)
		return false;
	for (; only && only[i] && e->only[i]; i++)
		if (strcmp(only[i], e->only[i]))
			return false;
	return !only || (!only[i] && !e->only[i]);
}

int rt_record_encoder_put(struct rt_record_encoder *e, const struct rt_record *rec,
			  struct rt_buf *out)
{
	const struct rt_layout *l = e->layout;
	const struct plan *plan;
	uint8_t *start, *body, *p;
	size_t size, head, room;
	uint64_t pid = 0;
	int ret;

	if (!rec->event)
		return -EINVAL;
	plan = plan_for(e, rec);
	if (!plan)
		return -ENOMEM;
	/*
	 * One pass: the Record is written after room for a one-byte length,
	 * which most records need, and moved on when its length took more.
	 */
	room = plan->max_size + (size_t)plan->n_dynamic * rec->size + 1 + 10;
	ret = rt_buf_reserve(out, 1 + varint_size(room) + room);
	if (ret)
		return ret;
	if (plan->pid_size && (uint64_t)plan->pid_offset + plan->pid_size <= rec->size)
		/* An int32 field: sign-extended. */
		pid = (uint64_t)(int64_t)(int32_t)rt_layout_read_uint(l, rec->data + plan->pid_offset,
								   plan->pid_size);
	start = out->data + out->len;
	body = p = start + 2;
	*p++ = (1 << 3);
	p = put_varint(p, rec->timestamp);
	*p++ = (2 << 3);
	p = put_varint(p, rec->type);
	*p++ = (3 << 3);
	p = put_varint(p, pid);
	/* Two loops, so that each has put_step compiled for its case. */
	if (rec->size >= plan->fixed_end)
		for (unsigned int i = 0; i < plan->n; i++)
			p = put_step(p, &plan->steps[i], rec, l, true);
	else
		for (unsigned int i = 0; i < plan->n; i++)
			p = put_step(p, &plan->steps[i], rec, l, false);
	if (e->numbered && rec->seq) {
		*p++ = (6 << 3);
		p = put_varint(p, rec->seq);
	}
	size = (size_t)(p - body);
	head = 1 + varint_size(size);
	if (head != 2)
		memmove(start + head, body, size);
	start[0] = TAG_BATCH_RECORDS;
	put_varint(start + 1, size);
	out->len += head + size;
	return 0;
}

int rt_encode_record(const struct rt_record *rec, const struct rt_layout *l, bool common,
		     const char *const *only, struct rt_buf *out)
{
	struct rt_record_encoder *e;
	int ret = rt_record_encoder_new(&e, l, common, only);

	if (ret)
		return ret;
	ret = rt_record_encoder_put(e, rec, out);
	rt_record_encoder_free(e);
	return ret;
}

int rt_encode_fixed_record(uint64_t timestamp, uint64_t seq, const uint8_t *data, size_t len,
			   struct rt_buf *out)
{
	Ringtap__FixedRecord r = RINGTAP__FIXED_RECORD__INIT;
	size_t size;
	int ret;

	r.timestamp = timestamp;
	r.has_seq = seq != 0;
	r.seq = seq;
	r.data.data = (uint8_t *)data;
	r.data.len = len;
	size = ringtap__fixed_record__get_packed_size(&r);
	ret = rt_buf_put_varint(out, TAG_BATCH_RECORDS);
	ret = ret ?: rt_buf_put_varint(out, size);
	ret = ret ?: rt_buf_reserve(out, size);
	if (!ret)
		out->len += ringtap__fixed_record__pack(&r, out->data + out->len);
	return ret;
}
