// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "layout.h"
#include "legacy.h"

static const struct rt_legacy_field padded_2012[] = {
	{ "common_type", 0, 2, 0 },
	{ "common_flags", 2, 1, 0 },
	{ "common_preempt_count", 3, 1, 0 },
	{ "common_pid", 4, 4, 1 },
	{ "common_padding", 8, 4, 1 },
};

static const struct rt_legacy_layout legacy_layouts[] = {
	{ "padded-2012", 12, padded_2012, 5 },
};

const struct rt_legacy_layout *rt_legacy_find(const char *name)
{
	for (size_t i = 0; i < sizeof(legacy_layouts) / sizeof(legacy_layouts[0]); i++)
		if (name && !strcmp(name, legacy_layouts[i].name))
			return &legacy_layouts[i];
	return NULL;
}

/* A field's natural alignment, as the compiler gave it in the kernel's struct. */
static unsigned int alignment(const struct tep_format_field *f)
{
	unsigned int a;

	if (f->flags & TEP_FIELD_IS_DYNAMIC)
		return 4;
	a = (f->flags & TEP_FIELD_IS_ARRAY) && f->elementsize ? f->elementsize :
								 (unsigned int)f->size;
	if (a >= 8)
		return 8;
	if (a >= 4)
		return 4;
	if (a >= 2)
		return 2;
	return 1;
}

static unsigned int count_fields(const struct tep_event *ev)
{
	unsigned int n = 0;

	for (struct tep_format_field *f = ev->format.fields; f; f = f->next)
		n++;
	return n;
}

int rt_legacy_offsets(const struct rt_legacy_layout *lg, const struct tep_event *ev,
		      unsigned int *offsets, unsigned int n, unsigned int *fixed_size)
{
	unsigned int at = lg->header_size, i = 0;

	if (count_fields(ev) > n)
		return -ENOSPC;
	for (struct tep_format_field *f = ev->format.fields; f; f = f->next, i++) {
		unsigned int a = alignment(f);

		at = (at + a - 1) / a * a;
		offsets[i] = at;
		at += (unsigned int)f->size;
	}
	*fixed_size = at;
	return 0;
}

static void put_uint(uint8_t *p, uint64_t v, unsigned int size, bool big_endian)
{
	for (unsigned int i = 0; i < size; i++)
		p[i] = (uint8_t)(v >> (big_endian ? (size - 1 - i) * 8 : i * 8));
}

int rt_legacy_rewrite(const struct rt_legacy_layout *lg, const struct rt_record *rec,
		      const struct rt_layout *l, uint8_t *out, size_t out_size)
{
	unsigned int offsets[128], fixed, i = 0, dyn;
	int ret;

	if (!rec->event)
		return -EINVAL;
	ret = rt_legacy_offsets(lg, rec->event, offsets, 128, &fixed);
	if (ret)
		return ret;
	if (fixed + rec->size > out_size)
		return -ENOSPC;
	memset(out, 0, fixed);
	/* Common fields by name: the ones this kernel lacks stay zero. */
	for (unsigned int c = 0; c < lg->n_common; c++) {
		const struct rt_field_desc *d = rt_layout_common(l, lg->common[c].name);
		uint64_t v;

		if (d && d->size <= lg->common[c].size && !rt_record_read_common(rec, l, d, &v))
			put_uint(out + lg->common[c].offset, v, lg->common[c].size, l->big_endian);
	}
	dyn = fixed;
	for (struct tep_format_field *f = rec->event->format.fields; f; f = f->next, i++) {
		const uint8_t *p;
		unsigned int len;
		uint32_t word;

		if (rt_record_field_bytes(rec, f, &p, &len))
			return -ERANGE;
		if (!(f->flags & TEP_FIELD_IS_DYNAMIC)) {
			if (offsets[i] + len > out_size)
				return -ENOSPC;
			memcpy(out + offsets[i], p, len);
			/* A flexible array ("char buf[]") runs on to the record's end. */
			if (!f->size && offsets[i] + len > dyn)
				dyn = offsets[i] + len;
			continue;
		}
		/* Dynamic data follows the fixed part; the location word points at it. */
		if (dyn + len > out_size ||
		    !rt_data_loc_make(dyn, offsets[i], f->flags & TEP_FIELD_IS_RELATIVE, len, &word))
			return -ENOSPC;
		memcpy(out + dyn, p, len);
		put_uint(out + offsets[i], word, 4, l->big_endian);
		dyn += len;
	}
	return (int)dyn;
}

/*
 * The payload fields' declarations as the kernel spelled them ("char buf[]",
 * "__data_loc char[] msg"), in order, and its print fmt line, from the
 * event's own format text: a kernel with the legacy header declares the
 * same fields, only at other offsets.
 */
static int kernel_spelling(const char *format, char **decls, unsigned int n, const char **print,
			   size_t *print_len)
{
	const char *p = format, *body = strstr(format, "\n\n");
	unsigned int i = 0;

	*print = NULL;
	*print_len = 0;
	if (!body)
		return -EINVAL;
	for (p = body; (p = strstr(p, "\tfield:")) && i < n; i++) {
		const char *end = strstr(p, ";\toffset:");

		if (!end)
			return -EINVAL;
		decls[i] = strndup(p + 7, (size_t)(end - p - 7));
		if (!decls[i])
			return -ENOMEM;
		p = end;
	}
	p = strstr(body, "print fmt: ");
	if (p) {
		*print = p + 11;
		*print_len = strcspn(*print, "\n");
	}
	return (int)i;
}

int rt_legacy_format(const struct rt_legacy_layout *lg, const struct tep_event *ev,
		     const char *format, char **text)
{
	unsigned int offsets[128], fixed, i = 0, n = count_fields(ev);
	char *buf = NULL, *decls[128] = { NULL };
	const char *print = NULL;
	size_t size = 0, print_len = 0;
	FILE *f;
	int ret = rt_legacy_offsets(lg, ev, offsets, 128, &fixed), spelled;

	if (ret)
		return ret;
	spelled = format ? kernel_spelling(format, decls, 128, &print, &print_len) : 0;
	if (spelled < 0)
		return spelled;
	f = open_memstream(&buf, &size);
	if (!f) {
		ret = -ENOMEM;
		goto out;
	}
	fprintf(f, "name: %s\nID: %d\nformat:\n", ev->name, ev->id);
	for (unsigned int c = 0; c < lg->n_common; c++)
		fprintf(f, "\tfield:%s %s;\toffset:%u;\tsize:%u;\tsigned:%d;\n",
			lg->common[c].size == 2 ? "unsigned short" :
			lg->common[c].size == 1 ? "unsigned char" : "int",
			lg->common[c].name, lg->common[c].offset, lg->common[c].size,
			lg->common[c].is_signed);
	fputc('\n', f);
	for (struct tep_format_field *fl = ev->format.fields; fl; fl = fl->next, i++) {
		bool array = (fl->flags & TEP_FIELD_IS_ARRAY) && !(fl->flags & TEP_FIELD_IS_DYNAMIC);

		if (spelled == (int)n)
			fprintf(f, "\tfield:%s;", decls[i]);
		else if (array)
			fprintf(f, "\tfield:%s %s[%d];", fl->type, fl->name, fl->arraylen);
		else
			fprintf(f, "\tfield:%s %s;", fl->type, fl->name);
		fprintf(f, "\toffset:%u;\tsize:%d;\tsigned:%d;\n", offsets[i], fl->size,
			!!(fl->flags & TEP_FIELD_IS_SIGNED));
	}
	fputc('\n', f);
	if (format && print)
		fprintf(f, "print fmt: %.*s\n", (int)print_len, print);
	else
		fprintf(f, "print fmt: %s\n", ev->print_fmt.format ? ev->print_fmt.format : "\"\"");
	if (fclose(f)) {
		ret = -ENOMEM;
		goto out;
	}
	*text = buf;
	buf = NULL;
out:
	free(buf);
	for (unsigned int k = 0; k < 128; k++)
		free(decls[k]);
	return ret;
}
