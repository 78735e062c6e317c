// SPDX-License-Identifier: LGPL-2.1-or-later
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <kbuffer.h>

#include "layout.h"
#include "util.h"

static const char *skip_space(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* Reads "KEY:N;" at p; returns the position after ';' or NULL. */
static const char *parse_number_item(const char *p, const char *end, const char *key,
				     unsigned int *value)
{
	size_t klen = strlen(key);
	unsigned long long v = 0;
	const char *digits;

	p = skip_space(p, end);
	if ((size_t)(end - p) < klen || memcmp(p, key, klen))
		return NULL;
	p += klen;
	digits = p;
	while (p < end && *p >= '0' && *p <= '9') {
		v = v * 10 + (unsigned int)(*p - '0');
		if (v > UINT32_MAX)
			return NULL;
		p++;
	}
	if (p == digits || p >= end || *p != ';')
		return NULL;
	*value = (unsigned int)v;
	return p + 1;
}

int rt_parse_field_line(const char *line, const char *end, char *type, size_t type_size,
			struct rt_field_desc *field)
{
	const char *p = skip_space(line, end), *decl, *semi, *name, *name_end;
	unsigned int is_signed = 0;
	size_t len;

	if ((size_t)(end - p) < 6 || memcmp(p, "field:", 6))
		return -EINVAL;
	decl = skip_space(p + 6, end);
	semi = memchr(decl, ';', end - decl);
	if (!semi)
		return -EINVAL;
	/* The name is the last word of the declaration, without any [N]. */
	name_end = semi;
	while (name_end > decl && name_end[-1] == ' ')
		name_end--;
	name = name_end;
	while (name > decl && name[-1] != ' ' && name[-1] != '\t')
		name--;
	if (name == decl)
		return -EINVAL;
	len = (const char *)memchr(name, '[', name_end - name) ?
		      (size_t)((const char *)memchr(name, '[', name_end - name) - name) :
		      (size_t)(name_end - name);
	if (!len || len >= sizeof(field->name))
		return -EINVAL;
	/* A C identifier, then nothing or "[digits]" or "[]". */
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '_')
			return -EINVAL;
	for (const char *b = name + len; b < name_end; b++)
		if (!(b == name + len ? *b == '[' : b == name_end - 1 ? *b == ']' :
					  isdigit((unsigned char)*b)))
			return -EINVAL;
	memcpy(field->name, name, len);
	field->name[len] = '\0';
	if (type) {
		const char *type_end = name;

		while (type_end > decl && (type_end[-1] == ' ' || type_end[-1] == '\t'))
			type_end--;
		len = type_end - decl;
		if (len >= type_size)
			return -EINVAL;
		memcpy(type, decl, len);
		type[len] = '\0';
	}
	p = parse_number_item(semi + 1, end, "offset:", &field->offset);
	if (p)
		p = parse_number_item(p, end, "size:", &field->size);
	if (!p)
		return -EINVAL;
	/* Nothing may follow the signed item: a malformed line is refused whole. */
	p = parse_number_item(p, end, "signed:", &is_signed);
	if (!p || is_signed > 1)
		return -EINVAL;
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
		p++;
	if (p != end)
		return -EINVAL;
	field->is_signed = is_signed;
	return 0;
}

static int parse_header_page(struct rt_layout *l)
{
	const char *p = l->header_page, *end = p + l->header_page_len;
	bool have_ts = false, have_commit = false, have_data = false;

	while (p < end) {
		const char *eol = memchr(p, '\n', end - p);
		struct rt_field_desc f;

		if (!eol)
			eol = end;
		if (!rt_parse_field_line(p, eol, f.type, sizeof(f.type), &f)) {
			if (!strcmp(f.name, "timestamp")) {
				l->page_timestamp = f;
				have_ts = true;
			} else if (!strcmp(f.name, "commit")) {
				l->page_commit = f;
				have_commit = true;
			} else if (!strcmp(f.name, "data")) {
				l->page_data = f;
				have_data = true;
			}
		}
		p = eol + 1;
	}
	if (!have_ts || !have_commit || !have_data)
		return -EINVAL;
	if (l->page_timestamp.size != 8 ||
	    (l->page_commit.size != 4 && l->page_commit.size != 8))
		return -EPROTONOSUPPORT;
	if (l->page_timestamp.offset + 8 > l->page_data.offset ||
	    l->page_commit.offset + l->page_commit.size > l->page_data.offset ||
	    !l->page_data.size || l->page_data.size > (1u << 27))
		return -EINVAL;
	l->long_size = l->page_commit.size;
	l->sub_buffer_size = l->page_data.offset + l->page_data.size;
	return 0;
}

/* "\tNAME : N bits" or "\tNAME : type == N" or "\tdata max type_len  == N" */
static int header_event_value(const char *text, size_t len, const char *name,
			      const char *unit, unsigned int *value)
{
	const char *p = text, *end = text + len;
	size_t nlen = strlen(name);

	while (p < end) {
		const char *eol = memchr(p, '\n', end - p), *q;
		unsigned long v = 0;

		if (!eol)
			eol = end;
		q = skip_space(p, eol);
		if ((size_t)(eol - q) > nlen && !memcmp(q, name, nlen) &&
		    (q[nlen] == ' ' || q[nlen] == ':' || q[nlen] == '\t')) {
			q += nlen;
			while (q < eol && (*q < '0' || *q > '9'))
				q++;
			if (q == eol)
				return -EINVAL;
			while (q < eol && *q >= '0' && *q <= '9' && v < 1000)
				v = v * 10 + (*q++ - '0');
			if (unit && !memmem(q, eol - q, unit, strlen(unit)))
				return -EINVAL;
			*value = v;
			return 0;
		}
		p = eol + 1;
	}
	return -ENOENT;
}

/*
 * kbuffer decodes one event header: check that the kernel describes that one,
 * rather than decode garbage from a kernel that changed it.
 */
static int check_header_event(const struct rt_layout *l)
{
	static const struct {
		const char *name, *unit;
		unsigned int kbuffer_value;
	} expect[] = {
		{ "type_len", "bits", 5 },
		{ "time_delta", "bits", 27 },
		{ "padding", NULL, 29 },
		{ "time_extend", NULL, 30 },
		{ "time_stamp", NULL, 31 },
		{ "data max type_len", NULL, 28 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(expect); i++) {
		unsigned int v;
		int ret = header_event_value(l->header_event, l->header_event_len, expect[i].name,
					     expect[i].unit, &v);

		if (ret == -ENOENT && !strcmp(expect[i].name, "time_stamp"))
			continue;	/* kernels before 4.17 had no absolute stamps */
		if (ret)
			return -EINVAL;
		if (v != expect[i].kbuffer_value)
			return -EPROTONOSUPPORT;
	}
	return 0;
}

/*
 * kbuffer does not read header_page: it has its own idea of where the page
 * keeps its timestamp and data. Ask it, with a scratch page, and refuse a
 * kernel whose page header it would misread.
 */
static int check_kbuffer_agrees(const struct rt_layout *l)
{
	struct kbuffer *kbuf;
	uint8_t *page;
	uint64_t stamp = 0x0123456789abcdefULL;
	int ret = 0;

	kbuf = kbuffer_alloc(l->long_size == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4,
			     l->big_endian ? KBUFFER_ENDIAN_BIG : KBUFFER_ENDIAN_LITTLE);
	page = calloc(1, l->sub_buffer_size);
	if (!kbuf || !page) {
		ret = -ENOMEM;
		goto out;
	}
	for (unsigned int i = 0; i < 8; i++)
		page[l->page_timestamp.offset + i] =
			(uint8_t)(stamp >> (l->big_endian ? (7 - i) * 8 : i * 8));
	if (kbuffer_load_subbuffer(kbuf, page) ||
	    kbuffer_start_of_data(kbuf) != (int)l->page_data.offset ||
	    kbuffer_subbuf_timestamp(kbuf, page) != stamp)
		ret = -EPROTONOSUPPORT;
out:
	kbuffer_free(kbuf);
	free(page);
	return ret;
}

int rt_layout_new(struct rt_layout **out, const char *header_page, size_t header_page_len,
		  const char *header_event, size_t header_event_len, bool big_endian)
{
	struct rt_layout *l;
	int ret = -ENOMEM;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	/* NUL-terminated copies: tep and the wire protocol want C strings. */
	l->header_page = strndup(header_page, header_page_len);
	l->header_event = strndup(header_event, header_event_len);
	if (!l->header_page || !l->header_event)
		goto fail;
	l->header_page_len = strlen(l->header_page);
	l->header_event_len = strlen(l->header_event);
	l->big_endian = big_endian;
	ret = parse_header_page(l);
	if (ret)
		goto fail;
	ret = check_header_event(l);
	if (ret)
		goto fail;
	ret = check_kbuffer_agrees(l);
	if (ret)
		goto fail;
	ret = -ENOMEM;
	l->tep = tep_alloc();
	if (!l->tep)
		goto fail;
	/* tep_alloc leaves long and page size 0; kbuffer would assume 4-byte longs. */
	tep_set_long_size(l->tep, (int)l->long_size);
	tep_set_page_size(l->tep, (int)l->sub_buffer_size);
	tep_set_file_bigendian(l->tep, big_endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	if (tep_parse_header_page(l->tep, l->header_page, l->header_page_len, (int)l->long_size)) {
		ret = -EINVAL;
		goto fail;
	}
	*out = l;
	return 0;
fail:
	rt_layout_free(l);
	return ret;
}

void rt_layout_free(struct rt_layout *l)
{
	if (!l)
		return;
	if (l->tep)
		tep_free(l->tep);
	free(l->header_page);
	free(l->header_event);
	free(l->common);
	for (unsigned int i = 0; i < l->n_formats; i++)
		free(l->formats[i].text);
	free(l->formats);
	free(l);
}

const char *rt_layout_format(const struct rt_layout *l, int id)
{
	for (unsigned int i = 0; i < l->n_formats; i++)
		if (l->formats[i].id == id)
			return l->formats[i].text;
	return NULL;
}

const struct rt_field_desc *rt_layout_common(const struct rt_layout *l, const char *name)
{
	for (unsigned int i = 0; i < l->n_common; i++)
		if (!strcmp(l->common[i].name, name))
			return &l->common[i];
	return NULL;
}

static int learn_common_fields(struct rt_layout *l, const struct tep_event *event)
{
	struct tep_format_field *f;
	unsigned int n = 0, i = 0;

	for (f = event->format.common_fields; f; f = f->next)
		n++;
	if (!n)
		return -EPROTO;
	if (l->common) {
		/* Every event of one kernel starts with the same header. */
		if (n != l->n_common)
			return -EPROTO;
		for (f = event->format.common_fields; f; f = f->next, i++)
			if (strcmp(f->name, l->common[i].name) ||
			    (unsigned int)f->offset != l->common[i].offset ||
			    (unsigned int)f->size != l->common[i].size)
				return -EPROTO;
		return 0;
	}
	l->common = calloc(n, sizeof(*l->common));
	if (!l->common)
		return -ENOMEM;
	for (f = event->format.common_fields; f; f = f->next, i++) {
		struct rt_field_desc *d = &l->common[i];
		const char *name = f->name;
		if (strlen(name) >= sizeof(d->name) || f->offset < 0 || f->size <= 0)
			goto bad;
		strcpy(d->name, name);
		snprintf(d->type, sizeof(d->type), "%s", f->type);
		d->offset = (unsigned int)f->offset;
		d->size = (unsigned int)f->size;
		d->is_signed = f->flags & TEP_FIELD_IS_SIGNED;
		if (d->offset + d->size > l->common_size)
			l->common_size = d->offset + d->size;
	}
	l->n_common = n;
	l->common_type = rt_layout_common(l, "common_type");
	l->common_pid = rt_layout_common(l, "common_pid");
	if (!l->common_type || (l->common_type->size != 1 && l->common_type->size != 2 &&
				l->common_type->size != 4))
		goto bad;
	return 0;
bad:
	free(l->common);
	l->common = NULL;
	l->n_common = 0;
	l->common_type = l->common_pid = NULL;
	return -EPROTO;
}

/*
 * A type as the kernel writes it: words, single spaces, '*'s, and "[]" at
 * the end only for __data_loc and __rel_loc fields.
 */
static bool valid_type(const char *t)
{
	bool dynamic = !strncmp(t, "__data_loc ", 11) || !strncmp(t, "__rel_loc ", 10);

	if (!*t || *t == ' ')
		return false;
	for (const char *p = t; *p; p++) {
		if (isalnum((unsigned char)*p) || *p == '_' || *p == '*')
			continue;
		if (*p == ' ' && p[1] && p[1] != ' ')
			continue;
		if (*p == '[' && dynamic && !strcmp(p, "[]"))
			return true;
		return false;
	}
	return true;
}

static bool starts(const char *p, const char *eol, const char *word)
{
	size_t n = strlen(word);

	return (size_t)(eol - p) >= n && !memcmp(p, word, n);
}

/*
 * libtraceevent's tokenizer turns these words into quoted strings wherever
 * they stand (a workaround for mac80211's formats before Linux 3.4), and its
 * field parser leaks what it held when it meets one there (fuzz-format).
 * No kernel since writes them outside a print format.
 */
static bool has_rewritten_word(const char *p, const char *eol)
{
	static const char *const words[] = { "LOCAL_PR_FMT", "STA_PR_FMT", "VIF_PR_FMT" };

	while (p < eol) {
		const char *w = p;

		while (p < eol && (isalnum((unsigned char)*p) || *p == '_'))
			p++;
		for (size_t i = 0; i < sizeof(words) / sizeof(*words); i++)
			if ((size_t)(p - w) == strlen(words[i]) && !memcmp(w, words[i], p - w))
				return true;
		if (p == w)
			p++;
	}
	return false;
}

/*
 * A format text must have the kernel's shape before libtraceevent parses it:
 * "name:", "ID:", "format:", field lines that rt_parse_field_line reads with
 * a type as valid_type() allows, blank lines, then "print fmt:"
 * to the end; printable ASCII, tabs and newlines only. libtraceevent 1.7.1
 * leaks (and has crashed) on malformed formats; fuzz-format found those this
 * refuses.
 */
static int check_format_text(const char *format, size_t len)
{
	const char *p = format, *end = format + len;

	for (const char *c = format; c < end; c++)
		if ((*c < 0x20 || *c > 0x7e) && *c != '\t' && *c != '\n')
			return -EINVAL;
	while (p < end) {
		const char *eol = memchr(p, '\n', end - p), *q;
		struct rt_field_desc f;
		char type[RT_FIELD_NAME_MAX];

		if (!eol)
			eol = end;
		for (q = p; q < eol && (*q == ' ' || *q == '\t'); q++)
			;
		if (starts(p, eol, "print fmt:"))
			return 0;
		if (has_rewritten_word(p, eol))
			return -EINVAL;
		if (memmem(p, eol - p, "field:", 6) && !starts(q, eol, "field:"))
			return -EINVAL;
		if (starts(q, eol, "field:")) {
			if (rt_parse_field_line(p, eol, type, sizeof(type), &f))
				return -EINVAL;
			if (!valid_type(type))
				return -EINVAL;
		} else if (q != eol && !starts(p, eol, "name:") && !starts(p, eol, "ID:") &&
			   !starts(p, eol, "format:")) {
			return -EINVAL;
		}
		p = eol + 1;
	}
	return 0;
}

static char *strip_print_fmt(const char *format, size_t len)
{
	const char *at = memmem(format, len, "\nprint fmt:", 11);
	size_t keep = at ? (size_t)(at - format) + 1 : len;
	char *out = malloc(keep + sizeof("print fmt: \"\"\n"));

	if (!out)
		return NULL;
	memcpy(out, format, keep);
	strcpy(out + keep, "print fmt: \"\"\n");
	return out;
}

int rt_layout_add_event(struct rt_layout *l, const char *system, const char *format,
			size_t len, struct tep_event **out)
{
	struct tep_event *event = NULL;
	char *fields_only;
	enum tep_errno err;
	int ret;

	if (check_format_text(format, len))
		return -EINVAL;
	/*
	 * ringtap types records from the fields alone and never uses the print
	 * format, where libtraceevent 1.7.1's parser leaks on odd input (found
	 * by fuzz-format): tep gets an empty one. Clients of the raw encoding
	 * get the text as the kernel wrote it.
	 */
	fields_only = strip_print_fmt(format, len);
	if (!fields_only)
		return -ENOMEM;
	err = tep_parse_format(l->tep, &event, fields_only, strlen(fields_only), system);
	free(fields_only);
	if (err == TEP_ERRNO__MEM_ALLOC_FAILED)
		return -ENOMEM;
	/* A print format tep cannot parse still leaves usable fields. */
	if (!event || (err && err != TEP_ERRNO__READ_PRINT_FAILED))
		return -EINVAL;
	ret = learn_common_fields(l, event);
	if (ret)
		return ret;
	if (!rt_layout_format(l, event->id)) {
		struct rt_event_format *nf = realloc(l->formats, (l->n_formats + 1) * sizeof(*nf));

		if (!nf)
			return -ENOMEM;
		l->formats = nf;
		nf[l->n_formats].id = event->id;
		nf[l->n_formats].text = strndup(format, len);
		if (!nf[l->n_formats].text)
			return -ENOMEM;
		l->n_formats++;
	}
	if (out)
		*out = event;
	return 0;
}

/* "key: N" lines of a stats text into st. */
void rt_cpu_stats_parse(const char *text, struct rt_cpu_stats *st)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "entries:", offsetof(struct rt_cpu_stats, entries) },
		{ "overrun:", offsetof(struct rt_cpu_stats, overrun) },
		{ "commit overrun:", offsetof(struct rt_cpu_stats, commit_overrun) },
		{ "dropped events:", offsetof(struct rt_cpu_stats, dropped_events) },
		{ "read events:", offsetof(struct rt_cpu_stats, read_events) },
	};

	memset(st, 0, sizeof(*st));
	for (const char *line = text; line && *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
			if (!strncmp(line, keys[i].key, strlen(keys[i].key)))
				*(unsigned long long *)((char *)st + keys[i].off) =
					strtoull(line + strlen(keys[i].key), NULL, 10);
}
