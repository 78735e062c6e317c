// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "view.h"
#include "util.h"

/* An snprintf-like sink that counts what did not fit. */
struct sink {
	char *buf;
	size_t size;
	size_t len;
};

static void put(struct sink *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct sink *s, const char *fmt, ...)
{
	size_t room = s->len < s->size ? s->size - s->len : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? s->buf + s->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		s->len += (size_t)n;
}

static void putc_(struct sink *s, char ch)
{
	if (s->len + 1 < s->size) {
		s->buf[s->len] = ch;
		s->buf[s->len + 1] = '\0';
	}
	s->len++;
}

/* n bytes as they are (what fits, NUL-terminated; the length counts all). */
static void putn(struct sink *s, const char *p, size_t n)
{
	if (s->len < s->size) {
		size_t room = s->size - s->len - 1, k = n < room ? n : room;

		memcpy(s->buf + s->len, p, k);
		s->buf[s->len + k] = '\0';
	}
	s->len += n;
}

/*
 * Numbers without printf, which was most of a line's cost: digits written
 * backwards into a small buffer, then appended.
 */
static void put_u64_width(struct sink *s, uint64_t v, unsigned int width)
{
	char digits[24], *p = digits + sizeof(digits);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while ((size_t)(digits + sizeof(digits) - p) < width)
		*--p = '0';
	putn(s, p, (size_t)(digits + sizeof(digits) - p));
}

static void put_u64(struct sink *s, uint64_t v)
{
	put_u64_width(s, v, 0);
}

static void put_i64(struct sink *s, int64_t v)
{
	if (v < 0) {
		putc_(s, '-');
		put_u64(s, (uint64_t)0 - (uint64_t)v);
		return;
	}
	put_u64(s, (uint64_t)v);
}

static void put_hex(struct sink *s, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	char digits[24], *p = digits + sizeof(digits);

	do {
		*--p = hex[v & 15];
		v >>= 4;
	} while (v);
	*--p = 'x';
	*--p = '0';
	putn(s, p, (size_t)(digits + sizeof(digits) - p));
}

/* What ringtapd's text knows about a field, rebuilt from its Schema entry as libtraceevent does. */
struct field_kind {
	bool string;
	bool pointer;
	unsigned int elem_size;	/* 0: bytes */
	bool is_signed;
	bool fixed;		/* not __data_loc / __rel_loc */
	unsigned int size;
};

static unsigned int type_size(const char *name, size_t len)
{
	static const struct {
		const char *name;
		unsigned int size;
	} table[] = {
		{ "u8", 1 }, { "u16", 2 }, { "u32", 4 }, { "u64", 8 }, { "s8", 1 },
		{ "s16", 2 }, { "s32", 4 }, { "s64", 8 }, { "char", 1 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(table); i++)
		if (strlen(table[i].name) == len && !memcmp(table[i].name, name, len))
			return table[i].size;
	return 0;
}

static struct field_kind field_kind(const Ringtap__Field *f, unsigned int long_size)
{
	struct field_kind k = { .is_signed = f->is_signed, .size = f->size };
	const char *bracket = strchr(f->type, '[');

	k.fixed = !(f->has_dynamic && f->dynamic) && strncmp(f->type, "__data_loc", 10) &&
		  strncmp(f->type, "__rel_loc", 9);
	k.pointer = strchr(f->type, '*') != NULL;
	if (!bracket) {
		k.elem_size = f->size;
		return k;
	}
	k.string = strstr(f->type, "char") || strstr(f->type, "u8") || strstr(f->type, "s8");
	if (f->has_array_len && f->array_len) {
		k.elem_size = f->size / f->array_len;
	} else if (!k.fixed) {
		/* "__data_loc u32[]": the word before the brackets. */
		const char *w = bracket;

		while (w > f->type && w[-1] != ' ')
			w--;
		k.elem_size = type_size(w, (size_t)(bracket - w));
	} else if (k.string) {
		k.elem_size = 1;
	} else if (strstr(f->type, "long")) {
		k.elem_size = long_size;
	}
	return k;
}

static bool host_big_endian(void)
{
	const uint16_t one = 1;

	return *(const uint8_t *)&one == 0;
}

static uint64_t read_uint(const uint8_t *p, unsigned int size, bool big_endian)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < size; i++)
		v |= (uint64_t)p[big_endian ? size - 1 - i : i] << (8 * i);
	return v;
}

static int64_t sign_extend(uint64_t v, unsigned int size)
{
	unsigned int shift = 64 - 8 * size;

	return (int64_t)(v << shift) >> shift;
}

/* ringtapd's put_string(): up to the first NUL, printable ASCII but '\\' as is, runs at once. */
static void put_text_string(struct sink *s, const uint8_t *p, size_t len)
{
	size_t i = 0;

	while (i < len && p[i]) {
		size_t run = i;

		while (run < len && p[run] >= 0x20 && p[run] < 0x7f && p[run] != '\\')
			run++;
		putn(s, (const char *)p + i, run - i);
		if (run == len || !p[run])
			return;
		put(s, "\\x%02x", p[run]);
		i = run + 1;
	}
}

/* Length of the UTF-8 sequence at p, 0 when it is not a valid one. */
static size_t utf8_len(const uint8_t *p, size_t len)
{
	size_t n;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (n > len)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* Overlong forms, surrogates and past U+10FFFF are not UTF-8. */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* A JSON string's insides; bytes that are not UTF-8 become \u00XX, so the line stays JSON. */
static void put_json_chars(struct sink *s, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len && p[i];) {
		size_t n = utf8_len(p + i, len - i);

		if (n > 1) {
			for (size_t j = 0; j < n; j++)
				putc_(s, (char)p[i + j]);
			i += n;
			continue;
		}
		if (p[i] == '"' || p[i] == '\\')
			put(s, "\\%c", p[i]);
		else if (p[i] == '\n')
			put(s, "\\n");
		else if (p[i] == '\t')
			put(s, "\\t");
		else if (p[i] < 0x20 || p[i] >= 0x7f)
			put(s, "\\u%04x", p[i]);
		else
			putc_(s, (char)p[i]);
		i++;
	}
}

static void put_json_string(struct sink *s, const uint8_t *p, size_t len)
{
	putc_(s, '"');
	put_json_chars(s, p, len);
	putc_(s, '"');
}

static void put_cstring(struct sink *s, const char *str, bool json)
{
	if (json)
		put_json_string(s, (const uint8_t *)str, strlen(str));
	else
		put_text_string(s, (const uint8_t *)str, strlen(str));
}

/* ringtapd's put_elements(): integers of the element width, or bytes. */
static void put_elements(struct sink *s, const struct field_kind *k, const uint8_t *p, size_t len,
			 bool big_endian, bool json)
{
	unsigned int esize = k->elem_size;

	if (esize != 1 && esize != 2 && esize != 4 && esize != 8)
		esize = 1;
	putc_(s, json ? '[' : '{');
	for (size_t i = 0; i + esize <= len; i += esize) {
		uint64_t v = read_uint(p + i, esize, big_endian);

		if (i)
			putc_(s, ',');
		if (k->is_signed)
			put_i64(s, sign_extend(v, esize));
		else
			put_u64(s, v);
	}
	putc_(s, json ? ']' : '}');
}

static void put_value(struct sink *s, const struct rt_value *v, const Ringtap__Field *f,
		      unsigned int long_size, bool big_endian, bool json)
{
	struct field_kind k;

	if (!f) {
		/* A common value, or one past the schema: a number or nothing. */
		k = (struct field_kind){ 0 };
	} else {
		k = field_kind(f, long_size);
	}
	switch (v->kind) {
	case RT_VALUE_SIGNED:
		put_i64(s, v->s);
		break;
	case RT_VALUE_UNSIGNED:
		if (k.pointer && !json)
			put_hex(s, v->u);
		else
			put_u64(s, v->u);
		if (v->symbol && !json) {
			putc_(s, '<');
			put_text_string(s, (const uint8_t *)v->symbol, v->symbol_len);
			putc_(s, '>');
		}
		break;
	case RT_VALUE_TEXT:
		if (json)
			put_json_string(s, v->bytes, v->len);
		else
			put_text_string(s, v->bytes, v->len);
		break;
	case RT_VALUE_BYTES:
		/* ringtapd sends empty bytes for a field that lies outside its record. */
		if (!v->len && k.fixed && k.size)
			put(s, json ? "null" : "<out of record>");
		else if (k.string && json)
			put_json_string(s, v->bytes, v->len);
		else if (k.string)
			put_text_string(s, v->bytes, v->len);
		else
			put_elements(s, &k, v->bytes, v->len, big_endian, json);
		break;
	default:
		put(s, json ? "null" : "?");
		break;
	}
}

static const char *loss_source(Ringtap__LossSource source)
{
	switch (source) {
	case RINGTAP__LOSS_SOURCE__KERNEL:
		return "kernel";
	case RINGTAP__LOSS_SOURCE__QUEUE:
		return "queue";
	case RINGTAP__LOSS_SOURCE__MALFORMED:
		return "malformed";
	default:
		return "unknown";
	}
}

static void format_lost(struct sink *s, const Ringtap__Lost *l, bool json)
{
	bool inexact = l->has_count_exact && !l->count_exact;

	if (json) {
		put(s, "{\"lost\":%" PRIu64 ",\"cpu\":%" PRIu32 ",\"source\":\"%s\"%s}", l->count,
		    l->cpu, loss_source(l->source), inexact ? ",\"exact\":false" : "");
		return;
	}
	put(s, "# cpu %" PRIu32 ": lost %s%" PRIu64 " events (%s)", l->cpu,
	    inexact ? "at least " : "", l->count, loss_source(l->source));
}

static void format_record(struct sink *s, const Ringtap__Layout *layout, unsigned int cpu,
			  const struct rt_record_view *r, const Ringtap__Schema *schema,
			  unsigned int flags)
{
	unsigned int long_size = layout ? layout->long_size : sizeof(long);
	bool big_endian = layout ? layout->big_endian : host_big_endian();
	bool json = flags & RT_FORMAT_JSON;
	bool time = !(flags & RT_FORMAT_NO_TIME);

	if (json) {
		putc_(s, '{');
		if (time) {
			putn(s, "\"ts\":", 5);
			put_u64(s, r->timestamp);
			putc_(s, ',');
		}
		putn(s, "\"cpu\":", 6);
		put_u64(s, cpu);
		putn(s, ",\"event\":", 9);
		if (schema) {
			putc_(s, '"');
			put_json_chars(s, (const uint8_t *)schema->system, strlen(schema->system));
			putc_(s, ':');
			put_json_chars(s, (const uint8_t *)schema->name, strlen(schema->name));
			putc_(s, '"');
		} else {
			put(s, "null,\"event_id\":%" PRIu32, r->event_id);
		}
		putn(s, ",\"pid\":", 7);
		put_i64(s, r->pid);
		putn(s, ",\"fields\":{", 11);
	} else {
		if (time) {
			put_u64(s, r->timestamp / 1000000000);
			putc_(s, '.');
			put_u64_width(s, r->timestamp % 1000000000, 9);
			putc_(s, ' ');
		}
		putc_(s, '[');
		put_u64_width(s, cpu, 3);
		putn(s, "] ", 2);
		if (!schema) {
			put(s, "unknown event id %" PRIu32, r->event_id);
			return;
		}
		put_cstring(s, schema->system, false);
		putc_(s, ':');
		put_cstring(s, schema->name, false);
		putn(s, " pid=", 5);
		put_i64(s, r->pid);
	}
	for (size_t i = 0; i < r->n_fields; i++) {
		const Ringtap__Field *f = schema && i < schema->n_fields ? schema->fields[i] : NULL;

		if (json) {
			if (i)
				putc_(s, ',');
			put_cstring(s, f ? f->name : "?", true);
			putc_(s, ':');
		} else {
			putc_(s, ' ');
			put_cstring(s, f ? f->name : "?", false);
			putc_(s, '=');
		}
		put_value(s, &r->fields[i], f, long_size, big_endian, json);
	}
	if (json)
		putc_(s, '}');
	if (r->n_common)
		put(s, json ? ",\"common\":{" : " |");
	for (size_t i = 0; i < r->n_common; i++) {
		char fallback[32];
		const char *name = fallback;

		if (layout && i < layout->n_common_fields)
			name = layout->common_fields[i]->name;
		else
			snprintf(fallback, sizeof(fallback), "common%zu", i);
		if (json) {
			if (i)
				putc_(s, ',');
			put_cstring(s, name, true);
			putc_(s, ':');
		} else {
			putc_(s, ' ');
			put_cstring(s, name, false);
			putc_(s, '=');
		}
		put_value(s, &r->common[i], NULL, long_size, big_endian, json);
	}
	if (json)
		put(s, r->n_common ? "}}" : "}");
}

static int sink_end(struct sink *s)
{
	return s->len > INT32_MAX ? -EOVERFLOW : (int)s->len;
}

static struct sink sink_start(char *buf, size_t size)
{
	if (size)
		buf[0] = '\0';
	return (struct sink){ .buf = buf, .size = size };
}

int rt_format_view(char *buf, size_t size, const Ringtap__Layout *layout, unsigned int cpu,
		   const struct rt_record_view *record, const Ringtap__Schema *schema,
		   unsigned int flags)
{
	struct sink s = sink_start(buf, size);

	format_record(&s, layout, cpu, record, schema, flags);
	return sink_end(&s);
}

int rt_format_record(char *buf, size_t size, const Ringtap__Layout *layout, unsigned int cpu,
		     const Ringtap__Record *record, const Ringtap__Schema *schema,
		     unsigned int flags)
{
	struct rt_value stack[64], *vals = stack;
	size_t n = record->n_fields + record->n_common;
	struct rt_record_view view;
	int ret;

	if (n > 64 && !(vals = calloc(n, sizeof(*vals))))
		return -ENOMEM;
	rt_record_view_of(record, &view, vals, n > 64 ? n : 64);
	ret = rt_format_view(buf, size, layout, cpu, &view, schema, flags);
	if (vals != stack)
		free(vals);
	return ret;
}

int rt_format_lost(char *buf, size_t size, const Ringtap__Lost *lost, unsigned int flags)
{
	struct sink s = sink_start(buf, size);

	format_lost(&s, lost, flags & RT_FORMAT_JSON);
	return sink_end(&s);
}

int rt_format_cpu_state(char *buf, size_t size, const Ringtap__CpuState *state,
			unsigned int flags)
{
	struct sink s = sink_start(buf, size);

	if (flags & RT_FORMAT_JSON)
		put(&s, "{\"cpu\":%u,\"online\":%s}", state->cpu, state->online ? "true" : "false");
	else
		put(&s, "# cpu %u %s", state->cpu, state->online ? "online" : "offline");
	return sink_end(&s);
}
