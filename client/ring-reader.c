// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "decode.h"
#include "encode.h"
#include "filter.h"
#include "glob.h"
#include "layout.h"
#include "ring-reader.h"
#include "ring.h"
#include "select.h"
#include "util.h"
#include "wire.h"

/* Losses are handed out before the page they came before: at most one per source. */
enum { LOSS_KERNEL, LOSS_RING, LOSS_CAUSES };

struct rt_ring_reader {
	Ringtap__Encoding encoding;
	char **globs;
	bool *cpus;			/* by CPU; NULL: every CPU */
	int32_t *pids;
	size_t n_pids;
	char *filter_text;		/* NULL: none */
	char **only;			/* the projection; NULL: every field */
	bool common;

	struct rt_layout *layout;	/* the Welcome's headers, the selected events' formats */
	struct rt_decoder *decoder;
	struct rt_record_encoder *viewer;	/* the DECODED encoder's plans, viewing */
	struct rt_filter *filter;
	struct tep_event **events;	/* selected, as the filter was compiled for */
	size_t n_events;
	bool events_changed;		/* a selected event came after the filter was compiled */
	bool attached;
	const Ringtap__Schema **schemas;	/* the DECODED Schema by event id, for events */
	size_t n_schemas;
	uint32_t welcome_cpus;

	struct rt_ring ring;
	/*
	 * The previous ringtapd's ring after a restart (has_old): pages below
	 * its written counts are read there, the rest in ring. No one writes
	 * it any more; it is let go once every selected CPU read past it.
	 */
	struct rt_ring old;
	bool has_old;
	unsigned int ncpus;
	struct rt_ring_cursor *cursors;
	uint64_t *ready;		/* per CPU: pages below it were announced */
	unsigned int cpu;		/* the CPU being read */
	uint8_t *page;			/* the copy of the page being handed out */
	uint32_t page_room;		/* its size: the first ring's page size */
	struct rt_ring_read got;
	unsigned int page_cpu;
	/*
	 * The page's first record's number among those read on its CPU, as
	 * ringtapd numbers them (Record.seq), and the records walked so far.
	 */
	uint64_t page_first_seq, page_walked;
	uint64_t last_seq;		/* of the last record or page handed out; 0: none */

	/* The page's records this subscription keeps, and the next to hand out. */
	struct rt_record *recs;
	size_t n_recs, recs_alloc, next_rec;
	bool page_pending;		/* RAW: the page is still to be handed out */
	Ringtap__Lost lost[LOSS_CAUSES];
	unsigned int lost_pending;	/* bit per cause */
	ProtobufCBinaryData page_bytes;
	struct rt_record_view view;
	struct rt_value *vals;
	size_t n_vals;
};

static void free_strv(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

static char **copy_strv(const char *const *v, bool *failed)
{
	size_t n = 0;
	char **out;

	*failed = false;
	if (!v)
		return NULL;
	while (v[n])
		n++;
	out = calloc(n + 1, sizeof(*out));
	for (size_t i = 0; out && i < n; i++)
		if (!(out[i] = strdup(v[i]))) {
			free_strv(out);
			out = NULL;
		}
	*failed = !out;
	return out;
}

void rt_ring_reader_free(struct rt_ring_reader *r)
{
	if (!r)
		return;
	free_strv(r->globs);
	free(r->cpus);
	free(r->pids);
	free(r->filter_text);
	free_strv(r->only);
	rt_filter_free(r->filter);
	rt_record_encoder_free(r->viewer);
	rt_decoder_free(r->decoder);
	rt_layout_free(r->layout);
	free(r->events);
	free(r->schemas);
	free(r->cursors);
	free(r->ready);
	free(r->page);
	free(r->recs);
	free(r->vals);
	free(r);
}

int rt_ring_reader_new(struct rt_ring_reader **out, const Ringtap__Welcome *w,
		       const struct rt_ring_reader_opts *o, struct rt_why *why)
{
	const Ringtap__Layout *l = w->layout;
	struct rt_ring_reader *r = calloc(1, sizeof(*r));
	bool failed = !r, f1, f2;
	int ret;

	*out = NULL;
	if (failed)
		return -ENOMEM;
	r->encoding = o->encoding;
	r->common = o->common;
	r->welcome_cpus = w->cpus;
	r->globs = copy_strv(o->events, &f1);
	r->only = copy_strv(o->fields, &f2);
	failed = f1 || f2;
	if (o->n_cpus) {
		r->cpus = calloc(w->cpus, sizeof(*r->cpus));
		for (size_t i = 0; r->cpus && i < o->n_cpus; i++)
			if (o->cpus[i] < w->cpus)
				r->cpus[o->cpus[i]] = true;
		failed |= !r->cpus;
	}
	if (o->n_pids) {
		r->pids = malloc(o->n_pids * sizeof(*r->pids));
		if (r->pids)
			memcpy(r->pids, o->pids, o->n_pids * sizeof(*r->pids));
		r->n_pids = o->n_pids;
		failed |= !r->pids;
	}
	if (o->filter && *o->filter)
		failed |= !(r->filter_text = strdup(o->filter));
	if (failed) {
		rt_ring_reader_free(r);
		return -ENOMEM;
	}
	ret = rt_layout_new(&r->layout, l->header_page, strlen(l->header_page), l->header_event,
			    strlen(l->header_event), l->big_endian);
	if (ret) {
		rt_ring_reader_free(r);
		return rt_why_set(why, ret, "the Welcome's header texts do not parse");
	}
	ret = rt_decoder_new(&r->decoder, r->layout) ?:
	      rt_record_encoder_new(&r->viewer, r->layout, r->common,
				    (const char *const *)r->only);
	if (ret) {
		rt_ring_reader_free(r);
		return ret;
	}
	*out = r;
	return 0;
}

static bool selected(const struct rt_ring_reader *r, const char *system, const char *name)
{
	for (char **g = r->globs; g && *g; g++)
		if (rt_glob_match(*g, system, name))
			return true;
	return false;
}

/* The filter for every selected event so far; the projection checked once, as a Hello's. */
static int compile_selection(struct rt_ring_reader *r, bool check_fields, struct rt_why *why)
{
	struct rt_filter *filter = NULL;
	char **checked = NULL;
	size_t n = 0;
	int ret;

	while (check_fields && r->only && r->only[n])
		n++;
	ret = rt_select_fields(r->only, n, r->events, r->n_events, &checked, why);
	free_strv(checked);
	if (ret)
		return ret;
	ret = rt_select_filter(r->filter_text, r->events, r->n_events, &filter, why);
	if (ret)
		return ret;
	rt_filter_free(r->filter);
	r->filter = filter;
	r->events_changed = false;
	return 0;
}

int rt_ring_reader_schema(struct rt_ring_reader *r, const Ringtap__Schema *s,
			  Ringtap__Frame **decoded, struct rt_why *why)
{
	struct tep_event *ev = NULL, **grown;
	struct rt_buf b = { 0 };
	uint64_t len = 0;
	int ret, used;

	*decoded = NULL;
	/* Only the events asked for are learned: a record of any other is then unknown. */
	if (!selected(r, s->system, s->name))
		return 0;
	if (!s->format)
		return rt_why_set(why, -EINVAL, "the Schema of %s:%s has no format text", s->system,
				  s->name);
	ev = tep_find_event(r->layout->tep, (int)s->event_id);
	/*
	 * Known already: a resumed reader's new connection sends its Schemas
	 * again (the same event, as the boot numbers it); its consumer gets
	 * the decoded one again, as a socket's new stream would.
	 */
	if (ev && (strcmp(ev->system, s->system) || strcmp(ev->name, s->name)))
		return rt_why_set(why, -EINVAL, "a second Schema for event id %" PRIu32 " (%s:%s, "
				  "was %s:%s)", s->event_id, s->system, s->name, ev->system,
				  ev->name);
	if (!ev) {
		ret = rt_layout_add_event(r->layout, s->system, s->format, strlen(s->format), &ev);
		if (ret)
			return rt_why_set(why, ret, "the format of %s:%s does not parse", s->system,
					  s->name);
		if (!ev || (uint32_t)ev->id != s->event_id)
			return rt_why_set(why, -EINVAL, "the format of %s:%s says id %d, its Schema "
					  "%" PRIu32, s->system, s->name, ev ? ev->id : -1,
					  s->event_id);
		grown = realloc(r->events, (r->n_events + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		r->events = grown;
		r->events[r->n_events++] = ev;
		r->events_changed = true;
		if (r->attached && (ret = compile_selection(r, false, why)))
			return ret;
	}
	if (r->encoding != RINGTAP__ENCODING__DECODED)
		return 0;
	ret = rt_encode_schema_frame(ev, NULL, NULL, (const char *const *)r->only, &b);
	used = ret ? 0 : rt_wire_varint_decode(b.data, b.len, &len);
	if (!ret && (used <= 0 || !(*decoded = ringtap__frame__unpack(NULL, len, b.data + used))))
		ret = -ENOMEM;
	rt_buf_free(&b);
	return ret;
}

bool rt_ring_reader_wants_symbols(const struct rt_ring_reader *r)
{
	if (r->encoding != RINGTAP__ENCODING__DECODED)
		return false;
	for (size_t i = 0; i < r->n_events; i++)
		for (struct tep_format_field *f = r->events[i]->format.fields; f; f = f->next)
			if ((f->flags & TEP_FIELD_IS_POINTER) &&
			    !(f->flags & (TEP_FIELD_IS_STRING | TEP_FIELD_IS_ARRAY)) &&
			    rt_encode_selected((const char *const *)r->only, f->name))
				return true;
	return false;
}

int rt_ring_reader_symbols(struct rt_ring_reader *r, const uint8_t *kallsyms, size_t len)
{
	char *text = malloc(len + 1);

	if (!text)
		return -ENOMEM;
	memcpy(text, kallsyms, len);
	text[len] = '\0';
	/* As ringtapd's own layout takes them (tracefs.c); a text it cannot read names nothing. */
	(void)tep_parse_kallsyms(r->layout->tep, text);
	free(text);
	return 0;
}

void rt_ring_reader_bind_schema(struct rt_ring_reader *r, const Ringtap__Schema *s)
{
	if (s->event_id >= r->n_schemas) {
		size_t n = (size_t)s->event_id + 64;
		const Ringtap__Schema **grown = realloc(r->schemas, n * sizeof(*grown));

		if (!grown)
			return;	/* its records then go without a Schema: see next_record */
		memset(grown + r->n_schemas, 0, (n - r->n_schemas) * sizeof(*grown));
		r->schemas = grown;
		r->n_schemas = n;
	}
	r->schemas[s->event_id] = s;
}

int rt_ring_reader_attach(struct rt_ring_reader *r, const Ringtap__Ring *ring, const void *base,
			  size_t size, struct rt_why *why)
{
	unsigned int n;
	int ret;

	if (r->attached)
		return rt_why_set(why, -EBADMSG, "a second Ring frame");
	if (ring->size != size)
		return rt_why_set(why, -EBADMSG, "the Ring frame says %" PRIu64 " bytes, %zu mapped",
				  ring->size, size);
	ret = rt_ring_attach(&r->ring, base, size);
	if (ret)
		return rt_why_set(why, ret, "the ring's header is not one this reader reads");
	n = r->ring.head.ncpus;
	if (n != r->welcome_cpus || ring->n_start_page != n || ring->n_events_before != n ||
	    ring->n_kernel_lost != n || ring->n_kernel_inexact != n || ring->n_malformed != n)
		return rt_why_set(why, -EBADMSG, "a ring of %u CPUs for %" PRIu32 " CPUs, with "
				  "starts for %zu", n, r->welcome_cpus, ring->n_start_page);
	r->ncpus = n;
	r->cursors = calloc(n, sizeof(*r->cursors));
	r->ready = calloc(n, sizeof(*r->ready));
	/* Aligned as malloc's is: the decoder reads the page header in place. */
	r->page_room = r->ring.head.page_size;
	r->page = malloc(r->page_room ? r->page_room : 1);
	if (!r->cursors || !r->ready || !r->page)
		return -ENOMEM;
	for (unsigned int c = 0; c < n; c++) {
		rt_ring_cursor_start(&r->cursors[c], ring->start_page[c], ring->events_before[c],
				     ring->kernel_lost[c], ring->kernel_inexact[c],
				     ring->malformed[c]);
		r->ready[c] = ring->start_page[c];
	}
	ret = compile_selection(r, true, why);
	if (ret)
		return ret;
	r->attached = true;
	return 0;
}

/* Whether the CPU's pages are this reader's to read. */
static bool cpu_selected(const struct rt_ring_reader *r, unsigned int cpu)
{
	return !r->cpus || r->cpus[cpu];
}

int rt_ring_reader_move(struct rt_ring_reader *r, const Ringtap__Ring *ring, const void *base,
			size_t size, struct rt_ring_area *dropped, struct rt_why *why)
{
	struct rt_ring moved;
	int ret;

	*dropped = (struct rt_ring_area){ 0 };
	if (!r->attached)
		return rt_why_set(why, -EBADMSG, "a Ring frame before the ring was attached");
	if (ring->size != size)
		return rt_why_set(why, -EBADMSG, "the Ring frame says %" PRIu64 " bytes, %zu mapped",
				  ring->size, size);
	ret = rt_ring_attach(&moved, base, size);
	if (ret)
		return rt_why_set(why, ret, "the new ring's header is not one this reader reads");
	if (moved.head.ncpus != r->ncpus || moved.head.page_size > r->page_room ||
	    ring->n_start_page != r->ncpus)
		return rt_why_set(why, -EBADMSG, "a new ring of %u CPUs and %u-byte pages for %u "
				  "CPUs and %u", moved.head.ncpus, moved.head.page_size, r->ncpus,
				  r->page_room);
	/*
	 * Restarted twice before this reader finished the first old ring: that
	 * one goes, and what it still held is counted lost (QUEUE) when the
	 * cursor reads on in the next.
	 */
	if (r->has_old) {
		for (unsigned int c = 0; c < r->ncpus; c++) {
			uint64_t end = rt_ring_written(&r->old, c);

			if (r->cursors[c].page < end)
				r->cursors[c].page = end;
		}
		*dropped = (struct rt_ring_area){ r->old.base, r->old.size };
	}
	r->old = r->ring;
	r->has_old = true;
	r->ring = moved;
	for (unsigned int c = 0; c < r->ncpus; c++)
		if (ring->start_page[c] > r->ready[c])
			r->ready[c] = ring->start_page[c];
	return 0;
}

bool rt_ring_reader_retired(struct rt_ring_reader *r, struct rt_ring_area *area)
{
	if (!r->has_old)
		return false;
	for (unsigned int c = 0; c < r->ncpus; c++)
		if (cpu_selected(r, c) && r->cursors[c].page < rt_ring_written(&r->old, c))
			return false;
	*area = (struct rt_ring_area){ r->old.base, r->old.size };
	r->has_old = false;
	return true;
}

int rt_ring_reader_ready(struct rt_ring_reader *r, const Ringtap__RingReady *note,
			 struct rt_why *why)
{
	if (!r->attached)
		return rt_why_set(why, -EBADMSG, "a RingReady before the Ring");
	if (note->n_cpus != note->n_written)
		return rt_why_set(why, -EBADMSG, "a RingReady of %zu CPUs and %zu counts",
				  note->n_cpus, note->n_written);
	for (size_t i = 0; i < note->n_cpus; i++) {
		if (note->cpus[i] >= r->ncpus)
			return rt_why_set(why, -EBADMSG, "a RingReady for cpu %" PRIu32 " of %u",
					  note->cpus[i], r->ncpus);
		if (note->written[i] > r->ready[note->cpus[i]])
			r->ready[note->cpus[i]] = note->written[i];
	}
	return 0;
}

static bool wants_pid(const struct rt_ring_reader *r, const struct rt_record *rec)
{
	const struct rt_field_desc *f = r->layout->common_pid;
	int32_t pid = 0;

	if (f && f->size <= 8 && (uint64_t)f->offset + f->size <= rec->size)
		pid = (int32_t)rt_layout_read_uint(r->layout, rec->data + f->offset, f->size);
	for (size_t i = 0; i < r->n_pids; i++)
		if (r->pids[i] == pid)
			return true;
	return false;
}

/* A record of the page: kept when the subscription holds it, as ringtapd's fan-out decides. */
static int keep_record(const struct rt_record *rec, void *ctx)
{
	struct rt_ring_reader *r = ctx;
	uint64_t seq = r->page_first_seq + r->page_walked++;

	if (!rec->event || (r->n_pids && !wants_pid(r, rec)) ||
	    (r->filter && !rt_filter_match(r->filter, rec->type, rec->data, rec->size, rec->cpu)))
		return 0;
	if (r->n_recs == r->recs_alloc) {
		size_t n = r->recs_alloc ? 2 * r->recs_alloc : 256;
		struct rt_record *grown = realloc(r->recs, n * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		r->recs = grown;
		r->recs_alloc = n;
	}
	r->recs[r->n_recs] = *rec;
	r->recs[r->n_recs++].seq = seq;
	return 0;
}

static void add_loss(struct rt_ring_reader *r, unsigned int cause, Ringtap__LossSource source,
		     uint64_t count, bool exact)
{
	Ringtap__Lost *l = &r->lost[cause];

	ringtap__lost__init(l);
	l->cpu = r->page_cpu;
	l->count = count;
	l->source = source;
	l->has_count_exact = true;
	l->count_exact = exact;
	r->lost_pending |= 1u << cause;
}

/* The CPU's next page taken out of the ring: 1, 0 when none is ready, -errno. */
static int take_page(struct rt_ring_reader *r, unsigned int cpu, struct rt_why *why)
{
	struct rt_page_result res;
	uint64_t malformed, inexact;
	int ret;

	/* Pages the previous ringtapd wrote are in its ring; the page buffer fits both areas'. */
	ret = rt_ring_read(r->has_old && r->cursors[cpu].page < rt_ring_written(&r->old, cpu) ?
			   &r->old : &r->ring, cpu, &r->cursors[cpu], r->page, r->page_room,
			   &r->got);
	if (ret < 0)
		return rt_why_set(why, ret, "cpu %u: the ring contradicts itself", cpu);
	if (ret == 0)
		return 0;
	r->page_cpu = cpu;
	r->n_recs = r->next_rec = 0;
	r->lost_pending = 0;
	/* The cursor is past the page: what it accounts for, less the kernel's losses, less these. */
	r->page_first_seq = r->cursors[cpu].events - r->cursors[cpu].kernel_lost - r->got.records + 1;
	r->page_walked = 0;
	/*
	 * As ringtapd reports them to a DECODED subscriber: the kernel's counts,
	 * "at least one" for a loss it gave none for and for each malformed page
	 * (lapped, or this one), in one KERNEL loss of the CPU before the page.
	 */
	malformed = r->got.lost_malformed + !!(r->got.flags & RT_RING_MALFORMED);
	inexact = (r->got.lost_kernel ? 0 : r->got.lost_kernel_inexact) + malformed;
	if (r->got.lost_kernel || inexact)
		add_loss(r, LOSS_KERNEL, RINGTAP__LOSS_SOURCE__KERNEL, r->got.lost_kernel + inexact,
			 !r->got.lost_kernel_inexact && !malformed);
	if (r->got.lost_ring)
		add_loss(r, LOSS_RING, RINGTAP__LOSS_SOURCE__QUEUE, r->got.lost_ring, true);
	if (r->got.flags & RT_RING_MALFORMED)
		return 1;
	if (r->encoding != RINGTAP__ENCODING__DECODED) {
		r->page_bytes.data = r->page;
		r->page_bytes.len = r->got.len;
		r->page_pending = true;
		return 1;
	}
	if (r->events_changed && (ret = compile_selection(r, false, why)))
		return ret;
	ret = rt_decode_page(r->decoder, cpu, r->page, r->got.len, keep_record, r, &res);
	if (ret == -ENOMEM)
		return ret;
	if (ret == -EBADMSG) {
		/* Whole to ringtapd, broken here: lost whole, as a malformed page is. */
		r->n_recs = 0;
		add_loss(r, LOSS_KERNEL, RINGTAP__LOSS_SOURCE__KERNEL,
			 r->got.lost_kernel + inexact + (r->got.records ? r->got.records : 1), false);
	}
	return 1;
}

static int next_record(struct rt_ring_reader *r, struct ringtap_event *ev,
		       const struct rt_record_view **view)
{
	const struct rt_record *rec = &r->recs[r->next_rec];
	int ret;

	for (;;) {
		ret = rt_record_encoder_view(r->viewer, rec, &r->view, r->vals, r->n_vals);
		if (ret != -ENOSPC)
			break;
		size_t n = r->n_vals ? 2 * r->n_vals : 64;
		struct rt_value *grown = realloc(r->vals, n * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		r->vals = grown;
		r->n_vals = n;
	}
	if (ret)
		return ret;
	r->next_rec++;
	r->last_seq = rec->seq;
	ev->kind = RINGTAP_RECORD;
	ev->cpu = r->page_cpu;
	ev->schema = rec->type < r->n_schemas ? r->schemas[rec->type] : NULL;
	*view = &r->view;
	return 1;
}

int rt_ring_reader_next(struct rt_ring_reader *r, struct ringtap_event *ev,
			const struct rt_record_view **view, struct rt_why *why)
{
	int ret;

	/* The caller cleared ev: each event sets what its kind has (a record, per record). */
	*view = NULL;
	for (;;) {
		if (r->lost_pending) {
			unsigned int cause = (unsigned int)__builtin_ctz(r->lost_pending);

			r->lost_pending &= ~(1u << cause);
			ev->kind = RINGTAP_LOST;
			ev->cpu = r->page_cpu;
			ev->lost = &r->lost[cause];
			return 1;
		}
		if (r->page_pending) {
			r->page_pending = false;
			r->last_seq = r->page_first_seq + r->got.records - 1;
			ev->kind = RINGTAP_PAGE;
			ev->cpu = r->page_cpu;
			ev->page = &r->page_bytes;
			ev->page_records = r->got.records;
			return 1;
		}
		if (r->next_rec < r->n_recs)
			return next_record(r, ev, view);
		/* The next CPU with an announced page, in CPU order. */
		for (; r->attached && r->cpu < r->ncpus; r->cpu++) {
			if ((r->cpus && !r->cpus[r->cpu]) ||
			    r->cursors[r->cpu].page >= r->ready[r->cpu])
				continue;
			ret = take_page(r, r->cpu, why);
			if (ret < 0)
				return ret;
			if (ret)
				break;
		}
		if (!r->attached || r->cpu == r->ncpus) {
			r->cpu = 0;
			return 0;
		}
	}
}

int rt_ring_reader_record(struct rt_ring_reader *r, struct rt_buf *out)
{
	if (!r->next_rec || r->next_rec > r->n_recs)
		return -EINVAL;
	return rt_record_encoder_put(r->viewer, &r->recs[r->next_rec - 1], out);
}

uint64_t rt_ring_reader_seq(const struct rt_ring_reader *r)
{
	return r->last_seq;
}

void rt_ring_reader_unbind_schemas(struct rt_ring_reader *r)
{
	for (size_t i = 0; i < r->n_schemas; i++)
		r->schemas[i] = NULL;
}
