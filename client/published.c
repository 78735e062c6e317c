// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "layout.h"
#include "page-build.h"
#include "published.h"
#include "ringtap.h"
#include "tracedat.h"

/* Bounds on what untrusted messages can make us keep. */
#define MAX_HOSTS 4096
#define MAX_SCHEMAS 65536
#define MAX_CPUS 8192
/* Records told apart as already taken: this many numbers back from the highest of a CPU. */
#define SEEN_MIN_BITS 4096
#define SEEN_MAX_BITS (1u << 17)
/* Lags measured to the millisecond up to this; longer ones count in the last. */
#define LAG_BINS 600001

struct schema_slot {
	char *subject;
	Ringtap__Published *msg;	/* owns the Schema */
};

struct cpu_seq {
	uint64_t session;
	char boot_id[40];
	uint64_t offered;	/* of this run, as seq says */
	uint64_t base;		/* the run's first number seen, when reading resumed mid-stream */
	/* Record numbers taken from seen_base on, one bit each: a copy is not taken twice. */
	uint8_t *seen;
	size_t seen_bits;
	uint64_t seen_base;
};

/* One page's records of a CPU, a message per event, written in their numbers' order. */
struct group_part {
	char *subject;
	Ringtap__Published *msg;	/* owns the PublishedRecords */
};

struct group {
	size_t n, cap;
	struct group_part *parts;	/* n: none held */
};

/*
 * The trace.dat of one boot of the host: pages rebuilt from the records' raw
 * bytes with the layout of that boot's Welcome, a builder per CPU.
 */
struct host_trace {
	char boot_id[40];
	char path[4200];
	int fd;
	struct tracedat *td;
	struct rt_layout *layout;
	struct rt_page_builder **cpus;
	uint64_t (*lost)[2];	/* per CPU: kernel, publish buffer; the file's CPU stats */
	unsigned int ncpus;
	int error;		/* the first: the file is given up */
};

struct rt_pub_host {
	char name[64];
	FILE *out;
	struct host_trace trace;	/* td NULL: none open */
	unsigned int files;	/* trace.dat files begun */
	unsigned int next_name;	/* the number the next one's name may take */
	uint64_t traced, trace_pages, untraced;	/* records into and not into a trace.dat */
	Ringtap__Published *welcome;	/* the last one: its layout formats records */
	struct schema_slot *schemas;
	size_t n_schemas;
	struct cpu_seq *cpus;
	size_t n_cpus;
	struct group page;
	uint64_t records, lost_kernel, lost_queue, offered_before, no_schema, twice;
};

int rt_collector_init(struct rt_collector *c, const char *outdir, unsigned int flags)
{
	memset(c, 0, sizeof(*c));
	c->flags = flags;
	if (outdir && !(c->outdir = strdup(outdir)))
		return -ENOMEM;
	return 0;
}

static void trace_free(struct host_trace *t)
{
	for (unsigned int i = 0; i < t->ncpus; i++)
		rt_page_builder_free(t->cpus[i]);
	free(t->cpus);
	free(t->lost);
	tracedat_free(t->td);
	rt_layout_free(t->layout);
	if (t->td)
		close(t->fd);
	memset(t, 0, sizeof(*t));
}

static void host_free(struct rt_pub_host *h)
{
	trace_free(&h->trace);
	if (h->out)
		fclose(h->out);
	if (h->welcome)
		ringtap__published__free_unpacked(h->welcome, NULL);
	for (size_t i = 0; i < h->n_schemas; i++) {
		free(h->schemas[i].subject);
		ringtap__published__free_unpacked(h->schemas[i].msg, NULL);
	}
	free(h->schemas);
	for (size_t i = 0; i < h->page.n; i++) {
		free(h->page.parts[i].subject);
		ringtap__published__free_unpacked(h->page.parts[i].msg, NULL);
	}
	free(h->page.parts);
	for (size_t i = 0; i < h->n_cpus; i++)
		free(h->cpus[i].seen);
	free(h->cpus);
	free(h);
}

void rt_collector_release(struct rt_collector *c)
{
	for (size_t i = 0; i < c->n_hosts; i++)
		host_free(c->hosts[i]);
	free(c->hosts);
	free(c->outdir);
	free(c->line);
	free(c->lag_ms);
	memset(c, 0, sizeof(*c));
}

/* "ringtap.<host>.…": the host token, which names a file, so only [A-Za-z0-9_-]. */
static int host_token(const char *subject, char *out, size_t size)
{
	const char *p, *end;

	if (strncmp(subject, "ringtap.", 8))
		return -EBADMSG;
	p = subject + 8;
	end = strchr(p, '.');
	if (!end || end == p || (size_t)(end - p) >= size)
		return -EBADMSG;
	for (const char *q = p; q < end; q++)
		if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
		      (*q >= '0' && *q <= '9') || *q == '-' || *q == '_'))
			return -EBADMSG;
	memcpy(out, p, (size_t)(end - p));
	out[end - p] = '\0';
	return 0;
}

static int find_host(struct rt_collector *c, const char *name, struct rt_pub_host **out)
{
	struct rt_pub_host *h, **more;

	for (size_t i = 0; i < c->n_hosts; i++)
		if (!strcmp(c->hosts[i]->name, name)) {
			*out = c->hosts[i];
			return 0;
		}
	if (c->n_hosts >= MAX_HOSTS)
		return -EBADMSG;
	more = realloc(c->hosts, (c->n_hosts + 1) * sizeof(*more));
	if (!more)
		return -ENOMEM;
	c->hosts = more;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	snprintf(h->name, sizeof(h->name), "%s", name);
	if (c->outdir) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s.txt", c->outdir, name);
		h->out = fopen(path, c->resumed ? "ae" : "we");
		if (!h->out) {
			int err = -errno;

			free(h);
			return err;
		}
	}
	c->hosts[c->n_hosts++] = h;
	*out = h;
	return 0;
}

static struct schema_slot *find_schema(struct rt_pub_host *h, const char *subject)
{
	for (size_t i = 0; i < h->n_schemas; i++)
		if (!strcmp(h->schemas[i].subject, subject))
			return &h->schemas[i];
	return NULL;
}

/* The latest Schema of a subject wins: a new boot may number and lay out the event anew. */
static int keep_schema(struct rt_pub_host *h, const char *subject, Ringtap__Published *p)
{
	struct schema_slot *s = find_schema(h, subject), *more;

	if (s) {
		ringtap__published__free_unpacked(s->msg, NULL);
		s->msg = p;
		return 0;
	}
	if (h->n_schemas >= MAX_SCHEMAS)
		return -EBADMSG;
	more = realloc(h->schemas, (h->n_schemas + 1) * sizeof(*more));
	if (!more)
		return -ENOMEM;
	h->schemas = more;
	s = &h->schemas[h->n_schemas];
	s->subject = strdup(subject);
	if (!s->subject)
		return -ENOMEM;
	s->msg = p;
	h->n_schemas++;
	return 0;
}

/* Sequence numbers run per (boot, daemon session, CPU): offered = the highest seen. */
static int count_seq(struct rt_collector *c, struct rt_pub_host *h, const Ringtap__Published *p,
		     uint64_t offered)
{
	struct cpu_seq *cs;

	if (p->cpu >= MAX_CPUS)
		return -EBADMSG;
	if (p->cpu >= h->n_cpus) {
		struct cpu_seq *more = realloc(h->cpus, (p->cpu + 1) * sizeof(*more));

		if (!more)
			return -ENOMEM;
		memset(more + h->n_cpus, 0, (p->cpu + 1 - h->n_cpus) * sizeof(*more));
		h->cpus = more;
		h->n_cpus = p->cpu + 1;
	}
	cs = &h->cpus[p->cpu];
	if (cs->session != p->session || strncmp(cs->boot_id, p->boot_id, sizeof(cs->boot_id))) {
		h->offered_before += cs->offered;
		cs->offered = 0;
		free(cs->seen);
		cs->seen = NULL;
		cs->seen_bits = 0;
		cs->seen_base = 0;
		cs->base = c->resumed ? p->seq : 0;
		cs->session = p->session;
		snprintf(cs->boot_id, sizeof(cs->boot_id), "%s", p->boot_id);
	}
	if (offered > cs->base && offered - cs->base > cs->offered)
		cs->offered = offered - cs->base;
	return 0;
}

static int put_line(struct rt_collector *c, struct rt_pub_host *h, const Ringtap__Layout *layout,
		    const struct ringtap_event *ev)
{
	int n = ringtap_format_event_layout(layout, ev, c->line, c->line_size, c->flags);

	if (n >= 0 && (size_t)n >= c->line_size) {
		char *bigger = realloc(c->line, (size_t)n + 1);

		if (!bigger)
			return -ENOMEM;
		c->line = bigger;
		c->line_size = (size_t)n + 1;
		n = ringtap_format_event_layout(layout, ev, c->line, c->line_size, c->flags);
	}
	if (n < 0)
		return n;
	if (h->out && (fwrite(c->line, 1, (size_t)n, h->out) != (size_t)n || fputc('\n', h->out) == EOF))
		return -EIO;
	return 0;
}

/*
 * Whether record number seq of the CPU's current run was taken before (a
 * message stored twice); marks it taken. Numbers from far back (more than
 * SEEN_MAX_BITS below the highest) are taken without a look.
 */
static int taken_before(struct cpu_seq *cs, uint64_t seq, bool *before)
{
	uint64_t idx;

	*before = false;
	if (seq < cs->seen_base)
		return 0;
	idx = seq - cs->seen_base;
	while (idx >= cs->seen_bits && cs->seen_bits < SEEN_MAX_BITS) {
		size_t bits = cs->seen_bits ? 2 * cs->seen_bits : SEEN_MIN_BITS;
		uint8_t *more = realloc(cs->seen, bits / 8);

		if (!more)
			return -ENOMEM;
		memset(more + cs->seen_bits / 8, 0, (bits - cs->seen_bits) / 8);
		cs->seen = more;
		cs->seen_bits = bits;
	}
	if (idx >= cs->seen_bits) {
		/* Slide: keep the upper half's worth below seq. */
		uint64_t shift = (idx - cs->seen_bits / 2 + 1 + 7) & ~(uint64_t)7;

		if (shift >= cs->seen_bits) {
			memset(cs->seen, 0, cs->seen_bits / 8);
		} else {
			memmove(cs->seen, cs->seen + shift / 8, (cs->seen_bits - shift) / 8);
			memset(cs->seen + (cs->seen_bits - shift) / 8, 0, shift / 8);
		}
		cs->seen_base += shift;
		idx -= shift;
	}
	*before = cs->seen[idx / 8] & (1u << (idx % 8));
	cs->seen[idx / 8] |= (uint8_t)(1u << (idx % 8));
	return 0;
}

static const Ringtap__Schema *schema_of(const struct schema_slot *s)
{
	return s->msg->schema;
}

/* A page into the file; the first error gives the file up (its pages so far stay). */
static void trace_page(struct rt_pub_host *h, unsigned int cpu)
{
	struct host_trace *t = &h->trace;
	const uint8_t *page;
	size_t len;

	page = rt_page_builder_take(t->cpus[cpu], &len);
	if (page && !t->error) {
		t->error = tracedat_add_page(t->td, cpu, page, len);
		h->trace_pages += !t->error;
	}
}

/* Ends the open trace.dat: every CPU's last page, then the pages into place. */
static int trace_close(struct rt_pub_host *h)
{
	struct host_trace *t = &h->trace;
	int ret;

	if (!t->td)
		return 0;
	for (unsigned int i = 0; i < t->ncpus; i++) {
		char stats[128];

		trace_page(h, i);
		/* "overrun" as the kernel counts it, for trace-cmd report --stat. */
		snprintf(stats, sizeof(stats), "overrun: %" PRIu64 "\n"
			 "ringtap publish lost: %" PRIu64 "\n", t->lost[i][0], t->lost[i][1]);
		tracedat_set_cpu_stats(t->td, i, stats);
	}
	ret = tracedat_finish(t->td, NULL);
	if (!ret)
		ret = t->error;
	if (ret)
		fprintf(stderr, "ringtap collect: %s: %s\n", t->path, strerror(-ret));
	trace_free(t);
	return ret;
}

/* The host's next file: NAME.dat, NAME.1.dat, ...; a resumed run keeps those there. */
static int trace_create(struct rt_collector *c, struct rt_pub_host *h)
{
	struct host_trace *t = &h->trace;

	for (;;) {
		if (h->next_name)
			snprintf(t->path, sizeof(t->path), "%s/%s.%u.dat", c->outdir, h->name,
				 h->next_name);
		else
			snprintf(t->path, sizeof(t->path), "%s/%s.dat", c->outdir, h->name);
		h->next_name++;
		t->fd = open(t->path, O_WRONLY | O_CREAT | O_CLOEXEC |
				      (c->resumed ? O_EXCL : O_TRUNC), 0644);
		if (t->fd >= 0) {
			h->files++;
			return 0;
		}
		if (errno != EEXIST)
			return -errno;
	}
}

/* A trace.dat for the boot of the host's Welcome, with its layout and the formats known. */
static int trace_open(struct rt_collector *c, struct rt_pub_host *h)
{
	const Ringtap__Welcome *w = h->welcome->welcome;
	const Ringtap__Layout *l = w->layout;
	struct host_trace *t = &h->trace;
	struct tracedat_params p = {
		.big_endian = l->big_endian, .long_size = l->long_size,
		.page_size = l->sub_buffer_size, .cpus = w->cpus, .spool_dir = c->outdir,
	};
	int ret;

	if (w->cpus > MAX_CPUS)
		return -EBADMSG;
	ret = rt_layout_new(&t->layout, l->header_page, strlen(l->header_page), l->header_event,
			    strlen(l->header_event), l->big_endian);
	/* The pages are built to the texts' layout: the Welcome's numbers must agree. */
	if (!ret && (t->layout->sub_buffer_size != l->sub_buffer_size ||
		     t->layout->long_size != l->long_size))
		ret = -EBADMSG;
	t->cpus = ret ? NULL : calloc(w->cpus ? w->cpus : 1, sizeof(*t->cpus));
	t->lost = ret ? NULL : calloc(w->cpus ? w->cpus : 1, sizeof(*t->lost));
	if (!ret && (!t->cpus || !t->lost))
		ret = -ENOMEM;
	for (unsigned int i = 0; !ret && i < w->cpus; i++, t->ncpus++)
		ret = rt_page_builder_new(&t->cpus[i], t->layout);
	if (!ret)
		ret = trace_create(c, h);
	if (!ret && (ret = tracedat_open(&t->td, t->fd, &p)))
		close(t->fd);
	if (!ret)
		ret = tracedat_set_headers(t->td, l->header_page, strlen(l->header_page),
					   l->header_event, strlen(l->header_event));
	if (!ret)
		tracedat_set_clock(t->td, w->trace_clock);
	for (size_t i = 0; !ret && i < h->n_schemas; i++) {
		const Ringtap__Schema *s = schema_of(&h->schemas[i]);

		if (s->format && !strcmp(h->schemas[i].msg->boot_id, h->welcome->boot_id))
			tracedat_add_format(t->td, s->system, s->format, strlen(s->format));
	}
	if (ret) {
		fprintf(stderr, "ringtap collect: %s: a trace.dat of %s: %s\n", h->name,
			h->welcome->boot_id, strerror(-ret));
		trace_free(t);
		return ret;
	}
	snprintf(t->boot_id, sizeof(t->boot_id), "%s", h->welcome->boot_id);
	return 0;
}

/*
 * Whether the trace.dat of p's boot is open, opened if the host's Welcome
 * is of that boot; another boot's is ended.
 */
static bool trace_ready(struct rt_collector *c, struct rt_pub_host *h, const Ringtap__Published *p)
{
	struct host_trace *t = &h->trace;

	if (!c->outdir || c->text_only)
		return false;
	if (t->td && strcmp(t->boot_id, p->boot_id))
		trace_close(h);
	if (t->td)
		return true;
	return h->welcome && !strcmp(h->welcome->boot_id, p->boot_id) && !trace_open(c, h);
}

/*
 * A record's raw bytes onto its CPU's page, in the trace.dat of its boot
 * (a new boot's Welcome ends the one before). Without them (a daemon before
 * PublishedRecords.raw, a boot whose Welcome is not here) it is counted.
 */
static void trace_record(struct rt_collector *c, struct rt_pub_host *h,
			 const Ringtap__Published *p, uint64_t ts, const ProtobufCBinaryData *raw)
{
	struct host_trace *t = &h->trace;
	int ret;

	if (!c->outdir || c->text_only)
		return;
	if (!raw || !trace_ready(c, h, p) || p->cpu >= t->ncpus || t->error) {
		h->untraced++;
		return;
	}
	ret = rt_page_builder_add(t->cpus[p->cpu], ts, raw->data, raw->len);
	if (ret == -ENOSPC) {
		trace_page(h, p->cpu);
		ret = rt_page_builder_add(t->cpus[p->cpu], ts, raw->data, raw->len);
	}
	if (ret)
		h->untraced++;
	else
		h->traced++;
}

/*
 * Records lost on a CPU (Lost, kernel or publish buffer) of the open trace.dat's
 * boot: the records before them end their page, the next page says it missed
 * events (trace-cmd shows the count), and the CPU's stats count them.
 */
static void trace_lost(struct rt_collector *c, struct rt_pub_host *h, const Ringtap__Published *p)
{
	struct host_trace *t = &h->trace;
	const Ringtap__Lost *l = p->lost;

	if (!trace_ready(c, h, p) || p->cpu >= t->ncpus)
		return;
	trace_page(h, p->cpu);
	rt_page_builder_missed(t->cpus[p->cpu],
			       l->has_count_exact && !l->count_exact ? 0 : l->count);
	t->lost[p->cpu][l->source == RINGTAP__LOSS_SOURCE__QUEUE] += l->count;
}

/* A record's line, unless its number was taken before. */
static int put_record(struct rt_collector *c, struct rt_pub_host *h, const char *subject,
		      const Ringtap__Published *p, const Ringtap__Record *rec,
		      const ProtobufCBinaryData *raw, uint64_t seq)
{
	struct ringtap_event ev = { .kind = RINGTAP_RECORD, .cpu = p->cpu };
	struct schema_slot *s;
	bool before;
	int ret = taken_before(&h->cpus[p->cpu], seq, &before);

	if (ret)
		return ret;
	if (before) {
		h->twice++;
		return 0;
	}
	s = find_schema(h, subject);
	ev.record = (Ringtap__Record *)rec;
	/* Without its Schema the line says "unknown event id", and it is counted. */
	if (s && s->msg->schema->event_id == rec->event_id)
		ev.schema = s->msg->schema;
	else
		h->no_schema++;
	h->records++;
	c->records++;
	trace_record(c, h, p, rec->timestamp, raw);
	if (c->lag_ms) {
		struct timespec now;
		uint64_t ns, ms;

		clock_gettime(CLOCK_REALTIME, &now);
		ns = (uint64_t)now.tv_sec * 1000000000 + (uint64_t)now.tv_nsec;
		ms = ns > rec->timestamp ? (ns - rec->timestamp) / 1000000 : 0;
		if (ms > c->lag_max_ms)
			c->lag_max_ms = ms;
		c->lag_ms[ms < LAG_BINS ? ms : LAG_BINS - 1]++;
	}
	return put_line(c, h, h->welcome ? h->welcome->welcome->layout : NULL, &ev);
}

struct page_entry {
	uint64_t seq;
	const Ringtap__Record *rec;
	const ProtobufCBinaryData *raw;
	size_t part;
};

static int by_seq(const void *a, const void *b)
{
	const struct page_entry *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->part < y->part ? -1 : x->part > y->part;
}

/* The page held, its records in their numbers' order: as ringtap stream prints them. */
static int flush_page(struct rt_collector *c, struct rt_pub_host *h)
{
	struct group *g = &h->page;
	struct page_entry *all;
	size_t n = 0, k = 0;
	int ret = 0;

	if (!g->n)
		return 0;
	for (size_t i = 0; i < g->n; i++)
		n += g->parts[i].msg->records->n_records;
	all = calloc(n ? n : 1, sizeof(*all));
	if (!all)
		ret = -ENOMEM;
	for (size_t i = 0; all && i < g->n; i++) {
		const Ringtap__Published *p = g->parts[i].msg;

		const Ringtap__PublishedRecords *pr = p->records;

		for (size_t r = 0; r < pr->n_records; r++)
			all[k++] = (struct page_entry){
				p->seq + pr->offsets[r], pr->records[r],
				pr->n_raw == pr->n_records ? &pr->raw[r] : NULL, i };
	}
	if (all)
		qsort(all, n, sizeof(*all), by_seq);
	for (size_t i = 0; all && i < n && !ret; i++)
		ret = put_record(c, h, g->parts[all[i].part].subject, g->parts[all[i].part].msg,
				 all[i].rec, all[i].raw, all[i].seq);
	free(all);
	for (size_t i = 0; i < g->n; i++) {
		free(g->parts[i].subject);
		ringtap__published__free_unpacked(g->parts[i].msg, NULL);
	}
	g->n = 0;
	return ret;
}

/* A part of the page held, or of a new one (which writes the one held first). Takes p. */
static int hold_part(struct rt_collector *c, struct rt_pub_host *h, const char *subject,
		     Ringtap__Published *p)
{
	struct group *g = &h->page;
	const Ringtap__Published *first = g->n ? g->parts[0].msg : NULL;
	int ret = 0;

	if (first && (first->cpu != p->cpu || first->seq != p->seq ||
		      first->session != p->session || strcmp(first->boot_id, p->boot_id)))
		ret = flush_page(c, h);
	if (!ret && g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 8;
		struct group_part *more = realloc(g->parts, cap * sizeof(*more));

		if (more) {
			g->parts = more;
			g->cap = cap;
		}
	}
	if (!ret && g->n < g->cap && (g->parts[g->n].subject = strdup(subject))) {
		g->parts[g->n++].msg = p;
		return 0;
	}
	ringtap__published__free_unpacked(p, NULL);
	return ret ?: -ENOMEM;
}

static bool records_valid(const Ringtap__PublishedRecords *r)
{
	if (!r->n_records || r->n_records != r->n_offsets)
		return false;
	for (size_t i = 1; i < r->n_offsets; i++)
		if (r->offsets[i] <= r->offsets[i - 1])
			return false;
	return true;
}

/* A Welcome or Schema into the descriptions file: a subject line, a length line, the bytes. */
static void describe(struct rt_collector *c, const char *subject, const uint8_t *data, size_t len)
{
	if (c->descriptions && !c->restoring)
		fprintf(c->descriptions, "%s\n%zu\n", subject, len),
			fwrite(data, 1, len, c->descriptions);
}

int rt_collector_take(struct rt_collector *c, const char *subject, const uint8_t *data,
		      size_t len)
{
	struct ringtap_event ev = { 0 };
	struct rt_pub_host *h;
	Ringtap__Published *p;
	char name[64];
	int ret;

	if (host_token(subject, name, sizeof(name))) {
		c->bad++;
		return -EBADMSG;
	}
	p = ringtap__published__unpack(NULL, len, data);
	if (!p) {
		c->bad++;
		return -EBADMSG;
	}
	ret = find_host(c, name, &h);
	if (ret)
		goto out;
	if (c->restoring && p->msg_case != RINGTAP__PUBLISHED__MSG_WELCOME &&
	    p->msg_case != RINGTAP__PUBLISHED__MSG_SCHEMA) {
		ret = -EBADMSG;
		goto out;
	}
	if (c->restoring)
		goto take;
	if (p->msg_case == RINGTAP__PUBLISHED__MSG_RECORDS) {
		if (!records_valid(p->records)) {
			c->bad++;
			ret = -EBADMSG;
			goto out;
		}
		ret = count_seq(c, h, p, p->seq + p->records->offsets[p->records->n_offsets - 1] + 1);
		if (ret)
			goto out;
		/* Held with the rest of its page, or freed there. */
		return hold_part(c, h, subject, p);
	}
	/* Anything else of the host comes after the page held: a Schema may replace its own. */
	ret = flush_page(c, h) ?:
	      count_seq(c, h, p, p->seq + (p->msg_case == RINGTAP__PUBLISHED__MSG_RECORD));
	if (ret)
		goto out;
take:
	ev.cpu = p->cpu;
	switch (p->msg_case) {
	case RINGTAP__PUBLISHED__MSG_WELCOME:
		describe(c, subject, data, len);
		if (h->welcome)
			ringtap__published__free_unpacked(h->welcome, NULL);
		h->welcome = p;
		return 0;
	case RINGTAP__PUBLISHED__MSG_SCHEMA:
		describe(c, subject, data, len);
		if (h->trace.td && p->schema->format && !strcmp(h->trace.boot_id, p->boot_id))
			tracedat_add_format(h->trace.td, p->schema->system, p->schema->format,
					    strlen(p->schema->format));
		ret = keep_schema(h, subject, p);
		if (!ret)
			return 0;
		break;
	case RINGTAP__PUBLISHED__MSG_RECORD:
		/* One record a message: what ringtapd published before PublishedRecords. */
		ret = put_record(c, h, subject, p, p->record, NULL, p->seq);
		break;
	case RINGTAP__PUBLISHED__MSG_LOST:
		ev.kind = RINGTAP_LOST;
		ev.lost = p->lost;
		if (p->lost->source == RINGTAP__LOSS_SOURCE__QUEUE)
			h->lost_queue += p->lost->count;
		else
			h->lost_kernel += p->lost->count;
		trace_lost(c, h, p);
		ret = put_line(c, h, NULL, &ev);
		break;
	default:
		c->bad++;
		ret = -EBADMSG;
		break;
	}
out:
	ringtap__published__free_unpacked(p, NULL);
	return ret;
}

int rt_collector_flush(struct rt_collector *c)
{
	int ret = 0;

	for (size_t i = 0; i < c->n_hosts; i++) {
		int err = flush_page(c, c->hosts[i]);

		if (err)
			ret = err;
		else if (c->hosts[i]->out && fflush(c->hosts[i]->out))
			ret = -errno;
	}
	return ret;
}

int rt_collector_finish(struct rt_collector *c)
{
	int ret = rt_collector_flush(c);

	for (size_t i = 0; i < c->n_hosts; i++) {
		int err = trace_close(c->hosts[i]);

		if (err && !ret)
			ret = err;
	}
	return ret;
}

int rt_collector_restore(struct rt_collector *c, FILE *f)
{
	char subject[512];
	uint8_t *data = NULL;
	size_t len;
	int ret = 0;

	c->restoring = true;
	while (!ret && fgets(subject, sizeof(subject), f)) {
		uint8_t *more;

		subject[strcspn(subject, "\n")] = '\0';
		if (fscanf(f, "%zu", &len) != 1 || fgetc(f) != '\n' || len > (64u << 20)) {
			ret = -EBADMSG;
			break;
		}
		more = realloc(data, len ? len : 1);
		if (!more) {
			ret = -ENOMEM;
			break;
		}
		data = more;
		if (fread(data, 1, len, f) != len)
			ret = -EBADMSG;
		else
			ret = rt_collector_take(c, subject, data, len);
	}
	free(data);
	c->restoring = false;
	return ret;
}

int rt_collector_measure_lag(struct rt_collector *c)
{
	c->lag_ms = calloc(LAG_BINS, sizeof(*c->lag_ms));
	return c->lag_ms ? 0 : -ENOMEM;
}

void rt_collector_lag_summary(const struct rt_collector *c, FILE *f)
{
	uint64_t n = 0, seen = 0, p50 = 0, p99 = 0;

	if (!c->lag_ms)
		return;
	for (size_t i = 0; i < LAG_BINS; i++)
		n += c->lag_ms[i];
	for (size_t i = 0; i < LAG_BINS && n; i++) {
		if (seen < (n + 1) / 2 && seen + c->lag_ms[i] >= (n + 1) / 2)
			p50 = i;
		if (seen < n - n / 100 && seen + c->lag_ms[i] >= n - n / 100)
			p99 = i;
		seen += c->lag_ms[i];
	}
	fprintf(f, "ringtap collect: lag from record to line over %" PRIu64 " records: p50 %" PRIu64
		" ms, p99 %" PRIu64 " ms, max %" PRIu64 " ms\n", n, p50, p99, c->lag_max_ms);
}

void rt_collector_summary(const struct rt_collector *c, FILE *f)
{
	for (size_t i = 0; i < c->n_hosts; i++) {
		const struct rt_pub_host *h = c->hosts[i];
		uint64_t offered = h->offered_before, accounted = h->records + h->lost_queue;

		for (size_t cpu = 0; cpu < h->n_cpus; cpu++)
			offered += h->cpus[cpu].offered;
		fprintf(f, "ringtap collect: %s: %" PRIu64 " records, lost %" PRIu64 " (%" PRIu64
			" kernel, %" PRIu64 " publish), %" PRIu64 " missing unreported", h->name,
			h->records, h->lost_kernel + h->lost_queue, h->lost_kernel, h->lost_queue,
			offered > accounted ? offered - accounted : 0);
		if (h->no_schema)
			fprintf(f, ", %" PRIu64 " without a schema", h->no_schema);
		if (h->twice)
			fprintf(f, ", %" PRIu64 " stored twice (taken once)", h->twice);
		fputc('\n', f);
		if (h->files)
			fprintf(f, "ringtap collect: trace.dat of %s: %" PRIu64 " records in %"
				PRIu64 " pages, %u file%s, %" PRIu64 " records left out\n", h->name,
				h->traced, h->trace_pages, h->files, h->files > 1 ? "s" : "",
				h->untraced);
	}
	if (c->bad)
		fprintf(f, "ringtap collect: %" PRIu64 " messages were not ringtapd's\n", c->bad);
}
