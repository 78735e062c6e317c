// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rt-kernel-text TREE: a captured buffer (debian.sh) decoded by ringtap's
 * decoder against the kernel's own text of the same buffer (TREE/trace.txt).
 *
 * Per CPU, in order, every record must be the kernel's: the same time (in
 * the kernel's microseconds), pid and event. Then field for field: each
 * conversion of the event's print format whose argument is a field as it is
 * (REC->field, __get_str(field)) is rendered from ringtap's decoded value
 * and must read as the kernel printed it; the rest of the line (symbols,
 * flags, casts, expressions the kernel computes) only has to fit around
 * them (the print formats are parsed apart: ringtap's layout drops them,
 * as it never prints with them). System calls, whose text the kernel writes its own way, are
 * compared on each argument and return value; trace_marker writes on their
 * text. And every field the format files list, common ones included, shown
 * or not: its bytes as this tool reads them from the record by the format
 * text alone (offset, size, the __data_loc word) must be the bytes ringtap
 * decodes for it. Prints what it compared; exits 1 on any difference.
 */
#include <dirent.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "fixture.h"

#define MAX_CPUS 64

/* render() rebuilds each conversion of the kernel's print format: that is its job. */
#pragma GCC diagnostic ignored "-Wformat-nonliteral"

struct kline {
	unsigned int pid;
	char usec[32];		/* "SEC.USEC" as the kernel printed it */
	char *rest;		/* after "SEC.USEC: " */
};

struct klines {
	struct kline *v;
	size_t n, cap, next;
};

/* A field as its format file lists it, read here without libtraceevent. */
struct listed_field {
	char name[64];
	unsigned int offset, size;
	bool dynamic, relative;
};

struct listed_event {
	struct listed_field *f;
	unsigned int n;
};

#define MAX_EVENT_ID 65536

struct state {
	struct fixture *fx;
	struct listed_event *listed;	/* by event id: every field of each format file */
	unsigned long listed_fields;
	struct tep_handle *printing;	/* the formats whole: ringtap's layout keeps no print fmt */
	struct klines cpu[MAX_CPUS];
	unsigned long records, fields, uncompared_events, differences;
	char pattern[8192];
};

static int differ(struct state *st, const struct rt_record *rec, const struct kline *k,
		  const char *fmt, ...)
{
	va_list ap;

	if (++st->differences <= 10) {
		fprintf(stderr, "cpu %u, %s %s:%s: ", rec->cpu, k ? k->usec : "-",
			rec->event ? rec->event->system : "?", rec->event ? rec->event->name : "?");
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	return 0;
}

/* "  comm-PID  [CPU] flags  SEC.USEC: REST"; comm may hold '-' and spaces. */
static int parse_kernel_line(char *line, unsigned int *cpu, struct kline *k)
{
	char *br = strstr(line, " ["), *dash, *ts, *colon;

	if (line[0] == '#' || !br)
		return -1;
	for (dash = br; dash > line && *dash != '-'; dash--)
		;
	if (*dash != '-' || sscanf(br, " [%u]", cpu) != 1)
		return -1;
	k->pid = (unsigned int)strtoul(dash + 1, NULL, 10);
	ts = strchr(br + 2, ']');
	if (!ts)
		return -1;
	ts++;
	while (*ts == ' ')
		ts++;
	ts = strchr(ts, ' ');		/* past the flags */
	while (ts && *ts == ' ')
		ts++;
	colon = ts ? strstr(ts, ": ") : NULL;
	if (!colon || (size_t)(colon - ts) >= sizeof(k->usec))
		return -1;
	memcpy(k->usec, ts, (size_t)(colon - ts));
	k->usec[colon - ts] = '\0';
	k->rest = strdup(colon + 2);
	return k->rest ? 0 : -1;
}

static void pattern_put(char **p, char *end, const char *text, size_t len)
{
	for (size_t i = 0; i < len && *p + 2 < end; i++) {
		if (strchr("*?[\\", text[i]))
			*(*p)++ = '\\';
		*(*p)++ = text[i];
	}
	**p = '\0';
}

static void pattern_any(char **p, char *end)
{
	if (*p + 1 < end && (*p == end - 1 || (*p)[-1] != '*'))
		*(*p)++ = '*';
	**p = '\0';
}

static const struct tep_format_field *direct_field(const struct tep_event *ev,
						   const struct tep_print_arg *arg)
{
	const char *name = NULL;

	if (!arg)
		return NULL;
	if (arg->type == TEP_PRINT_FIELD)
		name = arg->field.name;
	else if (arg->type == TEP_PRINT_STRING)
		name = arg->string.string;
	return name ? tep_find_field((struct tep_event *)ev, name) : NULL;
}

/*
 * One conversion, rendered from the decoded field as the kernel's
 * vsnprintf() would: the same flags, width and precision, the value cut
 * to the length modifier's type. 0, or -1 where it cannot say.
 */
static int render(const struct rt_record *rec, const struct tep_format_field *f,
		  const char *flags, char conv, const char *length, char *out, size_t size)
{
	char fmt[48];
	const uint8_t *p;
	unsigned int len;
	uint64_t v = 0;

	if (rt_record_field_bytes(rec, f, &p, &len))
		return -1;
	if (conv == 's') {
		char str[4096];
		unsigned int i;

		if (!(f->flags & TEP_FIELD_IS_STRING))
			return -1;
		for (i = 0; i < len && i < sizeof(str) - 1 && p[i]; i++)
			str[i] = (char)p[i];
		str[i] = '\0';
		snprintf(fmt, sizeof(fmt), "%%%ss", flags);
		snprintf(out, size, fmt, str);
		return 0;
	}
	if (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC | TEP_FIELD_IS_STRING) ||
	    !(len == 1 || len == 2 || len == 4 || len == 8))
		return -1;
	v = tep_read_number(rec->event->tep, p, (int)len);
	/* The field is read with its own signedness, then converted, as C does. */
	if (f->flags & TEP_FIELD_IS_SIGNED && len < 8)
		v = (uint64_t)((int64_t)(v << (64 - 8 * len)) >> (64 - 8 * len));
	/* The kernel writes 0x before a zero with '#' too; glibc does not. */
	if (strchr(flags, '#') && !v && (conv == 'x' || conv == 'X'))
		return -1;
	if (!strcmp(length, "hh")) {
		snprintf(fmt, sizeof(fmt), "%%%shh%c", flags, conv);
		snprintf(out, size, fmt, strchr("di", conv) ? (int)(signed char)v :
			 (int)(unsigned char)v);
	} else if (!strcmp(length, "h")) {
		snprintf(fmt, sizeof(fmt), "%%%sh%c", flags, conv);
		snprintf(out, size, fmt, strchr("di", conv) ? (int)(short)v : (int)(unsigned short)v);
	} else if (!*length || conv == 'c') {
		snprintf(fmt, sizeof(fmt), "%%%s%c", flags, conv);
		snprintf(out, size, fmt, (int)v);
	} else {
		snprintf(fmt, sizeof(fmt), "%%%sll%c", flags, conv);
		snprintf(out, size, fmt, (long long)v);
	}
	return 0;
}

/*
 * The print format as a glob: its literal text, each direct field rendered,
 * anything else "*". Returns the number of fields it renders, or -1 when the
 * format cannot be followed (its text then fits anything).
 */
static int build_pattern(struct state *st, const struct rt_record *rec)
{
	const struct tep_event *ev = tep_find_event(st->printing, (int)rec->type);
	const struct tep_print_arg *arg = ev ? ev->print_fmt.args : NULL;
	const char *s = ev ? ev->print_fmt.format : NULL;
	char *p = st->pattern, *end = st->pattern + sizeof(st->pattern);
	int fields = 0;

	*p = '\0';
	if (!s || !arg || ev->flags & TEP_EVENT_FL_FAILED)
		return -1;
	while (*s) {
		const char *spec = s, *lit = s;
		char length[3] = "", flags[16], conv, text[4096];
		const struct tep_format_field *f;
		bool star = false;

		if (*s == '\\' || *s == '\n')
			break;			/* an escape or a second line: the rest fits anything */
		if (*s != '%') {
			while (*s && *s != '%' && *s != '\\' && *s != '\n')
				s++;
			pattern_put(&p, end, lit, (size_t)(s - lit));
			continue;
		}
		if (s[1] == '%') {
			pattern_put(&p, end, "%", 1);
			s += 2;
			continue;
		}
		for (s++; *s && strchr("-+ #0", *s); s++)
			;
		for (; *s && (strchr("0123456789.", *s) || *s == '*'); s++)
			if (*s == '*')
				star = true;
		if ((size_t)(s - spec - 1) >= sizeof(flags))
			return -1;
		memcpy(flags, spec + 1, (size_t)(s - spec - 1));	/* flags, width, precision */
		flags[s - spec - 1] = '\0';
		for (size_t n = 0; *s && strchr("hlLqzjt", *s) && n < 2; s++)
			length[n++] = *s == 'L' || *s == 'q' ? 'l' : *s;
		if (!strcmp(length, "l") || strchr(length, 'z') || strchr(length, 'j') ||
		    strchr(length, 't'))
			strcpy(length, "ll");
		conv = *s;
		if (!conv)
			return -1;
		s++;
		if (conv == 'p')
			while (*s && ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
				      (*s >= '0' && *s <= '9')))
				s++;
		if (star) {
			/* The width or precision is an argument of its own. */
			for (const char *c = spec; c < s; c++)
				if (*c == '*' && arg)
					arg = arg->next;
			pattern_any(&p, end);
			arg = arg ? arg->next : NULL;
			continue;
		}
		f = direct_field(rec->event, arg);
		arg = arg ? arg->next : NULL;
		if (!f || !strchr("diouxXcs", conv) ||
		    render(rec, f, flags, conv, length, text, sizeof(text))) {
			pattern_any(&p, end);
			continue;
		}
		pattern_put(&p, end, text, strlen(text));
		fields++;
	}
	if (*s)
		pattern_any(&p, end);
	return fields;
}

/* "sys_NAME(arg: HEX, ...)" and "sys_NAME -> 0xHEX", as print_syscall_enter/exit write them. */
static void compare_syscall(struct state *st, const struct rt_record *rec, const struct kline *k)
{
	const struct tep_event *ev = rec->event;
	bool enter = !strncmp(ev->name, "sys_enter_", 10);
	char want[4096];
	size_t n;
	unsigned long fields = 0;

	n = (size_t)snprintf(want, sizeof(want), "sys_%s%s", ev->name + (enter ? 10 : 9),
			     enter ? "(" : " -> ");
	for (const struct tep_format_field *f = ev->format.fields; f && n < sizeof(want); f = f->next) {
		const uint8_t *p;
		unsigned int len;
		uint64_t v;

		if (!strcmp(f->name, "__syscall_nr"))
			continue;
		if (rt_record_field_bytes(rec, f, &p, &len) || len > 8) {
			differ(st, rec, k, "field %s unreadable", f->name);
			return;
		}
		v = tep_read_number(ev->tep, p, (int)len);
		if (enter)
			n += (size_t)snprintf(want + n, sizeof(want) - n, "%s%s: %" PRIx64,
					      fields ? ", " : "", f->name, v);
		else
			n += (size_t)snprintf(want + n, sizeof(want) - n, "0x%" PRIx64, v);
		fields++;
	}
	if (enter && n < sizeof(want))
		snprintf(want + n, sizeof(want) - n, ")");
	if (strcmp(k->rest, want)) {
		differ(st, rec, k, "kernel '%s', ours '%s'", k->rest, want);
		return;
	}
	st->fields += fields;
}

/* The bytes of a listed field in rec, by the kernel's rules; false when outside it. */
static bool listed_bytes(const struct rt_record *rec, const struct listed_field *f,
			 const uint8_t **p, unsigned int *len)
{
	uint32_t loc;
	unsigned int start;

	if (f->offset + f->size > rec->size)
		return false;
	if (!f->dynamic) {
		*p = rec->data + f->offset;
		/* A flexible array ("char buf[]", size 0) runs to the record's end. */
		*len = f->size ? f->size : rec->size - f->offset;
		return true;
	}
	if (f->size != sizeof(loc))
		return false;
	/* The word is in the trace's byte order, which on this test's hosts is the host's. */
	memcpy(&loc, rec->data + f->offset, sizeof(loc));
	start = (loc & 0xffff) + (f->relative ? f->offset + f->size : 0);
	*len = loc >> 16;
	if (start + *len > rec->size)
		return false;
	*p = rec->data + start;
	return true;
}

/* Every field the format file lists, shown by the print format or not. */
static void compare_listed(struct state *st, const struct rt_record *rec, const struct kline *k)
{
	const struct listed_event *le = rec->type < MAX_EVENT_ID ? &st->listed[rec->type] : NULL;

	if (!le || !le->n) {
		differ(st, rec, k, "no format file lists event id %u", rec->type);
		return;
	}
	for (unsigned int i = 0; i < le->n; i++) {
		const struct listed_field *lf = &le->f[i];
		const struct tep_format_field *f = tep_find_any_field(rec->event, lf->name);
		const uint8_t *want, *got;
		unsigned int want_len, got_len;

		if (!f) {
			differ(st, rec, k, "field %s, in the format file, not in ringtap's event",
			       lf->name);
			continue;
		}
		if (!listed_bytes(rec, lf, &want, &want_len)) {
			differ(st, rec, k, "field %s lies outside the record", lf->name);
			continue;
		}
		if (rt_record_field_bytes(rec, f, &got, &got_len) || got_len != want_len ||
		    memcmp(got, want, want_len)) {
			differ(st, rec, k, "field %s: ringtap's %u bytes differ from the record's %u "
			       "at offset %u", lf->name, got_len, want_len, lf->offset);
			continue;
		}
		st->listed_fields++;
	}
}

static int on_record(const struct rt_record *rec, void *ctx)
{
	struct state *st = ctx;
	struct klines *kl = &st->cpu[rec->cpu < MAX_CPUS ? rec->cpu : 0];
	const struct rt_field_desc *pidf = rt_layout_common(st->fx->layout, "common_pid");
	unsigned long long usec = (rec->timestamp + 500) / 1000;
	const struct kline *k;
	char want[64];
	uint64_t pid = 0;
	size_t name_len;
	int fields;

	st->records++;
	if (!rec->event)
		return differ(st, rec, NULL, "unknown event id %u", rec->type);
	if (kl->next >= kl->n)
		return differ(st, rec, NULL, "a record the kernel's text does not have");
	k = &kl->v[kl->next++];
	rt_record_read_common(rec, st->fx->layout, pidf, &pid);
	snprintf(want, sizeof(want), "%llu.%06llu", usec / 1000000, usec % 1000000);
	if (strcmp(want, k->usec) || pid != k->pid)
		return differ(st, rec, k, "time %s pid %" PRIu64 ", the kernel's %s pid %u: '%s'",
			      want, pid, k->usec, k->pid, k->rest);
	compare_listed(st, rec, k);
	if (!strcmp(rec->event->system, "syscalls")) {
		compare_syscall(st, rec, k);
		return 0;
	}
	if (!strcmp(rec->event->system, "ftrace")) {
		/* trace_marker: "tracing_mark_write: TEXT" from the buf field. */
		const struct tep_format_field *buf = tep_find_field(rec->event, "buf");
		const uint8_t *p;
		unsigned int len, n = 0;

		if (!buf || rt_record_field_bytes(rec, buf, &p, &len))
			return differ(st, rec, k, "no buf");
		while (n < len && p[n] && p[n] != '\n')
			n++;
		if (strncmp(k->rest, "tracing_mark_write: ", 20) || strlen(k->rest + 20) != n ||
		    memcmp(k->rest + 20, p, n))
			return differ(st, rec, k, "kernel '%s', buf '%.*s'", k->rest, (int)n, p);
		st->fields++;
		return 0;
	}
	name_len = strlen(rec->event->name);
	if (strncmp(k->rest, rec->event->name, name_len) || strncmp(k->rest + name_len, ": ", 2))
		return differ(st, rec, k, "kernel '%s'", k->rest);
	fields = build_pattern(st, rec);
	if (fields < 0) {
		st->uncompared_events++;
		return 0;
	}
	if (fnmatch(st->pattern, k->rest + name_len + 2, 0))
		return differ(st, rec, k, "kernel '%s', ours '%s'", k->rest + name_len + 2,
			      st->pattern);
	st->fields += (unsigned long)fields;
	return 0;
}

static int read_kernel_text(struct state *st, const char *path)
{
	size_t len;
	char *text = read_whole_file(path, &len), *save = NULL;

	if (!text)
		return -1;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct kline k;
		unsigned int cpu;
		struct klines *kl;

		if (parse_kernel_line(line, &cpu, &k) || cpu >= MAX_CPUS)
			continue;
		kl = &st->cpu[cpu];
		if (kl->n == kl->cap) {
			kl->cap = kl->cap ? 2 * kl->cap : 1024;
			kl->v = realloc(kl->v, kl->cap * sizeof(*kl->v));
			if (!kl->v)
				return -1;
		}
		kl->v[kl->n++] = k;
	}
	free(text);
	return 0;
}

/*
 * A format file's "ID:" and its field lines, as the kernel writes them:
 * "\tfield:TYPE NAME[N];\toffset:O;\tsize:S;\tsigned:G;".
 */
static int list_fields(struct state *st, const char *text)
{
	struct listed_event le = { NULL, 0 };
	unsigned int id;
	const char *at = strstr(text, "\nID: "), *line;

	if (!at || sscanf(at, "\nID: %u", &id) != 1 || id >= MAX_EVENT_ID)
		return -1;
	for (line = strstr(text, "\tfield:"); line; line = strstr(line + 1, "\tfield:")) {
		struct listed_field f = { .offset = 0 };
		const char *decl = line + 7, *semi = strchr(decl, ';'), *end, *name;

		if (!semi)
			return -1;
		end = semi;
		if (end[-1] == ']')
			while (end > decl && *end != '[')
				end--;
		for (name = end; name > decl && name[-1] != ' '; name--)
			;
		if (end - name <= 0 || (size_t)(end - name) >= sizeof(f.name) ||
		    sscanf(semi, ";\toffset:%u;\tsize:%u;", &f.offset, &f.size) != 2)
			return -1;
		memcpy(f.name, name, (size_t)(end - name));
		f.dynamic = !strncmp(decl, "__data_loc ", 11) || !strncmp(decl, "__rel_loc ", 10);
		f.relative = !strncmp(decl, "__rel_loc ", 10);
		le.f = realloc(le.f, (le.n + 1) * sizeof(*le.f));
		if (!le.f)
			return -1;
		le.f[le.n++] = f;
	}
	free(st->listed[id].f);
	st->listed[id] = le;
	return 0;
}

static struct tep_handle *read_print_formats(struct state *st, const char *tree)
{
	struct tep_handle *tep = tep_alloc();
	char dir[1024], path[1600];
	struct dirent *sys, *ev;
	DIR *events, *one;

	snprintf(dir, sizeof(dir), "%s/events", tree);
	events = tep ? opendir(dir) : NULL;
	while (events && (sys = readdir(events))) {
		snprintf(path, sizeof(path), "%s/%s", dir, sys->d_name);
		one = sys->d_type != DT_DIR || sys->d_name[0] == '.' ? NULL : opendir(path);
		while (one && (ev = readdir(one))) {
			size_t len;
			char *text;

			snprintf(path, sizeof(path), "%s/%s/%s/format", dir, sys->d_name, ev->d_name);
			text = ev->d_type != DT_DIR || ev->d_name[0] == '.' ? NULL :
			       read_whole_file(path, &len);
			if (text) {
				tep_parse_event(tep, text, len, sys->d_name);
				if (list_fields(st, text))
					fprintf(stderr, "rt-kernel-text: %s: fields not read\n", path);
			}
			free(text);
		}
		if (one)
			closedir(one);
	}
	if (events)
		closedir(events);
	return tep;
}

int main(int argc, char **argv)
{
	static const char *const every[] = { "*:*", NULL };
	static struct state st;
	struct fixture fx;
	char path[2048], name[64], *slash;
	unsigned long kernel_lines = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: rt-kernel-text TREE\n");
		return 2;
	}
	/* fixture_open() takes a root and a name. */
	snprintf(path, sizeof(path), "%s", argv[1]);
	slash = strrchr(path, '/');
	if (!slash)
		return 2;
	*slash = '\0';
	snprintf(name, sizeof(name), "%s", slash + 1);
	if (fixture_open(&fx, path, name, every))
		return 1;
	st.fx = &fx;
	st.listed = calloc(MAX_EVENT_ID, sizeof(*st.listed));
	st.printing = st.listed ? read_print_formats(&st, argv[1]) : NULL;
	if (!st.printing)
		return 1;
	snprintf(path, sizeof(path), "%s/trace.txt", argv[1]);
	if (read_kernel_text(&st, path)) {
		fprintf(stderr, "rt-kernel-text: cannot read %s\n", path);
		return 1;
	}
	for (int cpu = 0; cpu < fx.ncpus && cpu < MAX_CPUS; cpu++) {
		size_t len;
		uint8_t *pages = fixture_pages(&fx, cpu, &len);
		unsigned int psize = fx.layout->sub_buffer_size;

		if (!pages)
			return 1;
		for (size_t off = 0; off + psize <= len; off += psize) {
			struct rt_page_result r;

			if (rt_decode_page(fx.decoder, (unsigned int)cpu, pages + off, psize,
					   on_record, &st, &r) == -EBADMSG)
				differ(&st, &(struct rt_record){ .cpu = (unsigned int)cpu }, NULL,
				       "malformed page: %s", r.error);
		}
		free(pages);
		kernel_lines += st.cpu[cpu].n;
		if (st.cpu[cpu].next != st.cpu[cpu].n)
			differ(&st, &(struct rt_record){ .cpu = (unsigned int)cpu }, NULL,
			       "the kernel's text has %zu records, ringtap decoded %zu",
			       st.cpu[cpu].n, st.cpu[cpu].next);
	}
	printf("rt-kernel-text: %lu records decoded, %lu lines of the kernel's text; "
	       "%lu fields equal to the kernel's; %lu records of events whose format "
	       "could not be followed; %lu listed fields equal to the record's; "
	       "%lu differences\n",
	       st.records, kernel_lines, st.fields, st.uncompared_events, st.listed_fields,
	       st.differences);
	fixture_close(&fx);
	tep_free(st.printing);
	for (unsigned int i = 0; i < MAX_EVENT_ID; i++)
		free(st.listed[i].f);
	free(st.listed);
	return st.differences || !st.records || st.records != kernel_lines ? 1 : 0;
}
