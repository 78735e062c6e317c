// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <trace-seq.h>

#include "config.h"
#include "cpu_reader.h"
#include "decode.h"
#include "layout.h"
#include "log.h"
#include "nats.h"
#include "page_ring.h"
#include "pump.h"
#include "server.h"
#include "state.h"
#include "subscriber.h"
#include "text.h"
#include "tracefs.h"

struct cpu_account {
	unsigned long long records, unknown;
	unsigned long long kernel_lost;	/* reported: what the kernel overwrote before we read it */
	unsigned long long missed_pages_inexact;	/* pages that said "lost some" only */
	unsigned long long malformed_pages;
	unsigned long long other_lost;	/* commit overruns and drops, reported at the end */
	/*
	 * What the ring's slots say: records of whole pages (a malformed page
	 * the walk had begun counts none there), exact kernel losses, and those
	 * without a count.
	 */
	uint64_t ring_read, ring_lost, ring_inexact;
	uint64_t last_ts;		/* of the last record read: losses come after it */
	uint64_t page_index;		/* records of the page being walked so far */
	/* Taken from the kernel by a crashed run and in no ring: lost before the next page. */
	uint64_t unread_lost;
	bool said_out_of_memory;	/* its reader could not copy a queued page out: logged once */
};

struct rt_pump {
	struct rt_session *session;
	const struct rt_layout *layout;
	struct rt_decoder *decoder;
	struct rt_cpu_reader *readers;
	struct rt_page_ring *ring;
	bool ring_continued;		/* from the previous ringtapd's: its readers read on */
	struct cpu_account *acct;
	bool *offline;			/* per CPU, as last seen */
	int ncpus;
	bool watch_cpus;		/* a live system, not a captured tree */
	bool capped;			/* the last pass stopped at max_pages on some CPU */
	struct rt_pump_sinks to;
	struct trace_seq line;
};

/* ring_pages = 0: a few times the kernel's buffer, in sub-buffers (of data: the header is not counted). */
static unsigned int ring_slots(const struct rt_session *session, const struct rt_layout *layout,
			       unsigned long ring_pages)
{
	uint64_t pages = RT_CONFIG_RING_PAGES_UNKNOWN;

	if (ring_pages)
		return (unsigned int)ring_pages;
	if (rt_session_buffer_kb(session) && layout->page_data.size)
		pages = ((uint64_t)rt_session_buffer_kb(session) * 1024 + layout->page_data.size - 1) /
			layout->page_data.size * RT_CONFIG_RING_BUFFERS;
	return pages > rt_config_key_max(RT_CONF_RING_PAGES) ?
	       (unsigned int)rt_config_key_max(RT_CONF_RING_PAGES) : (unsigned int)pages;
}

int rt_pump_new(struct rt_pump **out, struct rt_session *session, struct rt_layout *layout,
		unsigned long ring_pages, int ring_fd, struct rt_why *why)
{
	struct rt_pump *p = calloc(1, sizeof(*p));
	unsigned int slots;
	int ret;

	*out = NULL;
	if (!p)
		return rt_why_set(why, -ENOMEM, "out of memory");
	trace_seq_init(&p->line);
	p->session = session;
	p->layout = layout;
	p->ncpus = rt_session_ncpus(session);
	p->watch_cpus = !rt_session_read_only(session);
	p->readers = calloc((size_t)p->ncpus, sizeof(*p->readers));
	p->acct = calloc((size_t)p->ncpus, sizeof(*p->acct));
	p->offline = calloc((size_t)p->ncpus, sizeof(*p->offline));
	if (!p->readers || !p->acct || !p->offline) {
		ret = rt_why_set(why, -ENOMEM, "out of memory");
		goto fail;
	}
	for (int cpu = 0; cpu < p->ncpus; cpu++)
		p->readers[cpu].fd = -1;
	ret = rt_decoder_new(&p->decoder, layout);
	if (ret) {
		rt_why_set(why, ret, "preparing the page decoder");
		goto fail;
	}
	slots = ring_slots(session, layout, ring_pages);
	if (ring_fd >= 0) {
		struct rt_ring_geometry g = { (unsigned int)p->ncpus, slots, layout->sub_buffer_size };
		struct rt_why lost = { "" };

		ret = rt_page_ring_adopt(&p->ring, ring_fd, slots, &g, &lost);
		if (ret)
			rt_log(LOG_WARNING, "the previous ringtapd's page ring: %s (%s); a new one is "
			       "made and its readers are not resumed", lost.text, strerror(-ret));
		p->ring_continued = !ret;
	}
	ret = p->ring ? 0 : rt_page_ring_new(&p->ring, (unsigned int)p->ncpus, slots,
					      layout->sub_buffer_size, why);
	if (ret)
		goto fail;
	for (int cpu = 0; cpu < p->ncpus; cpu++) {
		p->offline[cpu] = rt_cpu_online(cpu) == 0;
		ret = rt_cpu_reader_open(&p->readers[cpu], session, cpu, p->ring,
					 layout->sub_buffer_size);
		if (ret) {
			rt_why_set(why, ret, "opening cpu%d's trace_pipe_raw", cpu);
			goto fail;
		}
	}
	*out = p;
	return 0;
fail:
	rt_pump_free(p);
	return ret;
}

void rt_pump_free(struct rt_pump *p)
{
	if (!p)
		return;
	for (int cpu = 0; p->readers && cpu < p->ncpus; cpu++)
		rt_cpu_reader_close(&p->readers[cpu]);
	free(p->readers);
	rt_page_ring_free(p->ring);
	free(p->acct);
	free(p->offline);
	rt_decoder_free(p->decoder);
	trace_seq_destroy(&p->line);
	free(p);
}

void rt_pump_set_sinks(struct rt_pump *p, const struct rt_pump_sinks *sinks)
{
	p->to = *sinks;
}

struct rt_page_ring *rt_pump_ring(const struct rt_pump *p)
{
	return p->ring;
}

bool rt_pump_ring_continued(const struct rt_pump *p)
{
	return p->ring_continued;
}

static int on_record(const struct rt_record *in, void *ctx)
{
	struct rt_pump *p = ctx;
	struct cpu_account *a = &p->acct[in->cpu];
	/* Numbered as the ring counts: a resumed subscriber's place is found there again. */
	struct rt_record numbered = *in;
	const struct rt_record *rec = &numbered;

	numbered.seq = a->ring_read + ++a->page_index;
	a->records++;
	if (!rec->event)
		a->unknown++;
	if (p->to.server)
		rt_server_record(p->to.server, rec);
	if (p->to.nats)
		rt_nats_record(p->to.nats, rec);
	if (!p->to.text)
		return 0;
	trace_seq_reset(&p->line);
	rt_record_text(&p->line, rec, p->layout, p->to.text_flags);
	trace_seq_terminate(&p->line);
	fputs(p->line.buffer, p->to.text);
	fputc('\n', p->to.text);
	return 0;
}

/*
 * The kernel lost events before this page (written before before_ts; 0:
 * unknown), or the page itself is lost (malformed), or (in_ring false) the
 * stop found events lost after the last page, which no slot tells.
 */
static void kernel_loss(struct rt_pump *p, int cpu, uint64_t count, bool exact, uint64_t before_ts,
			bool in_ring)
{
	uint64_t after_ts = p->acct[cpu].last_ts;

	if (p->to.server)
		rt_server_kernel_loss(p->to.server, (unsigned int)cpu, count, exact, after_ts,
				      before_ts, in_ring);
	if (p->to.nats)
		rt_nats_kernel_loss(p->to.nats, (unsigned int)cpu, count, exact, after_ts,
				    before_ts);
}

/* Events a crashed run took from the kernel and never passed on, lost before this page. */
static void unread_loss(struct rt_pump *p, int cpu, uint64_t count, uint64_t before_ts)
{
	uint64_t after_ts = p->acct[cpu].last_ts;

	if (p->to.server)
		rt_server_daemon_loss(p->to.server, (unsigned int)cpu, count, after_ts, before_ts);
	if (p->to.nats)
		rt_nats_kernel_loss(p->to.nats, (unsigned int)cpu, count, true, after_ts,
				    before_ts);
	if (p->to.text)
		fprintf(p->to.text, "# cpu %d: lost %" PRIu64 " events before %" PRIu64 "\n", cpu,
			count, before_ts);
}

/*
 * How many events the kernel lost before this page. The page says so when
 * it had room for the count; when it had not (a page full to its last
 * bytes), only that some were. The CPU's overrun counter (per_cpu/cpuN/
 * stats) gives the count either way: the losses reported so far never pass
 * it, so a page without a count gets what the counter has beyond them, and
 * the sum reported is the kernel's own. The counter is read when it runs
 * ahead of a page (losses after the page was taken, which a later page
 * counts again), so those are not reported twice. *exact is false only
 * for "at least one": no count on the page and no counter to ask.
 */
static uint64_t lost_before(struct rt_pump *p, int cpu, const struct rt_page_result *res,
			    bool *exact)
{
	uint64_t reported = p->acct[cpu].kernel_lost, count = res->missed_count;
	struct rt_cpu_stats st;

	*exact = true;
	if (rt_session_cpu_stats(p->session, cpu, &st)) {
		/* No counter (a tree without stats): the page's word, or "at least one". */
		*exact = res->missed_exact;
		return res->missed_exact ? count : 1;
	}
	if (st.overrun <= reported)
		return 0;
	if (!res->missed_exact || count > st.overrun - reported)
		count = st.overrun - reported;
	return count;
}

static int on_page(int cpu, struct rt_page_buf *buf, unsigned int len, void *ctx)
{
	const uint8_t *page = buf->data;
	struct rt_pump *p = ctx;
	struct cpu_account *a = &p->acct[cpu];
	struct rt_page_result res;
	struct rt_ring_page_info info = { .len = len };
	uint64_t unread = a->unread_lost;
	bool walk = p->to.text || p->to.nats ||
		    (p->to.server && rt_server_wants_records(p->to.server));
	int ret;

	/* Numbered past them, as the ring's counts go on: a resumed subscriber is told there. */
	if (unread) {
		a->ring_read += unread;
		a->records += unread;
		a->unread_lost = 0;
	}
	/* Raw subscribers alone take the page whole: it is checked and counted, not walked. */
	a->page_index = 0;
	ret = rt_decode_page(p->decoder, (unsigned int)cpu, page, len, walk ? on_record : NULL, p,
			     &res);
	if (!walk && ret == 0)
		a->records += res.records;
	if (ret == -EBADMSG) {
		a->malformed_pages++;
		rt_log(LOG_WARNING, "cpu %d: malformed page skipped (%s)", cpu, res.error);
		if (p->to.text)
			fprintf(p->to.text, "# cpu %d: malformed page skipped (%s)\n", cpu, res.error);
		/* Its records are lost, how many is unknown: subscribers are told so. */
		kernel_loss(p, cpu, 0, false, 0, true);
	} else if (res.missed) {
		bool exact;
		uint64_t count = lost_before(p, cpu, &res, &exact);

		if (!res.missed_exact)
			a->missed_pages_inexact++;
		a->kernel_lost += count;
		if (exact)
			a->ring_lost += count;
		else
			a->ring_inexact++;
		if (count)
			kernel_loss(p, cpu, count, exact, res.timestamp, true);
		if (p->to.text && count)
			fprintf(p->to.text, "# cpu %d: lost %" PRIu64 " events before %" PRIu64 "\n",
				cpu, count, res.timestamp);
	}
	if (unread)
		unread_loss(p, cpu, unread, ret == -EBADMSG ? 0 : res.timestamp);
	/* The slot is whole before anyone is told of it: ring readers read it on their own. */
	if (ret == -EBADMSG) {
		info.flags = RT_RING_MALFORMED;
	} else {
		info.records = res.records;
		info.first_ts = res.first_timestamp;
		info.last_ts = res.last_timestamp;
	}
	info.events_before = a->ring_read + a->ring_lost;
	info.kernel_lost = a->ring_lost;
	info.kernel_inexact = a->ring_inexact;
	/* Those before it: this one, counted above, is its flag. */
	info.malformed = a->malformed_pages - (ret == -EBADMSG);
	rt_page_ring_commit(p->ring, (unsigned int)cpu, &info);
	a->ring_read += info.records;
	if (p->to.server) {
		if (ret != -EBADMSG)
			rt_server_page(p->to.server, (unsigned int)cpu, buf, len, res.records,
				       res.first_timestamp, res.last_timestamp,
				       info.events_before - info.kernel_lost + 1);
		rt_server_end_page(p->to.server);
	}
	if (p->to.nats) {
		struct rt_ring_page_info next;
		uint64_t at = rt_page_ring_next(p->ring, (unsigned int)cpu, &next);

		rt_nats_end_page(p->to.nats);
		rt_nats_ring_at(p->to.nats, (unsigned int)cpu, at, &next);
	}
	if (ret != -EBADMSG)
		a->last_ts = res.last_timestamp;
	return ret == -EBADMSG ? 0 : ret;
}

/*
 * What a drain queued goes out as it ends: a pass's pages in one write to
 * each subscriber (one whose queue fills past half writes sooner:
 * rt_server_end_page(), server.c).
 */
static void drained(struct rt_pump *p)
{
	if (p->to.nats)
		rt_nats_end_drain(p->to.nats);
	if (p->to.server)
		rt_server_flush(p->to.server);
	if (p->to.text)
		fflush(p->to.text);
}

/* One CPU's pages; what went wrong is said here, a want of memory once until it passes. */
static int drain_one(struct rt_pump *p, int cpu, unsigned int max_pages)
{
	struct rt_cpu_reader *r = &p->readers[cpu];
	struct cpu_account *a = &p->acct[cpu];
	int n = rt_cpu_reader_drain(r, max_pages, on_page, p);

	if (n < 0)
		rt_log(LOG_ERR, "reading cpu%d: %s", cpu, strerror(-n));
	if (r->out_of_memory && !a->said_out_of_memory)
		rt_log(LOG_ERR, "cpu%d: out of memory to copy a queued page out of the ring; reading "
		       "resumes when there is, and what the kernel overwrites meanwhile is reported "
		       "lost", cpu);
	a->said_out_of_memory = r->out_of_memory;
	return n;
}

int rt_pump_drain_cpu(struct rt_pump *p, int cpu, unsigned int max_pages)
{
	int n = drain_one(p, cpu, max_pages);

	drained(p);
	return n;
}

int rt_pump_drain(struct rt_pump *p, unsigned int max_pages)
{
	int total = 0;

	p->capped = false;
	for (int cpu = 0; cpu < p->ncpus; cpu++) {
		int n = drain_one(p, cpu, max_pages);

		if (n < 0) {
			total = n;
			break;
		}
		p->capped |= max_pages && (unsigned int)n >= max_pages;
		total += n;
	}
	drained(p);
	return total;
}

int rt_pump_ncpus(const struct rt_pump *p)
{
	return p->ncpus;
}

int rt_pump_fd(const struct rt_pump *p, int cpu)
{
	return p->readers[cpu].is_file ? -1 : p->readers[cpu].fd;
}

bool rt_pump_capped(const struct rt_pump *p)
{
	return p->capped;
}

unsigned int rt_pump_passes_per_buffer(const struct rt_pump *p, unsigned int max_pages)
{
	uint64_t passes;

	if (!max_pages)
		return 1;		/* a pass reads to the end */
	if (rt_session_read_only(p->session))
		return UINT_MAX;	/* a captured file does not refill: read it all */
	if (!rt_session_buffer_kb(p->session) || !p->layout->page_data.size)
		return 16;		/* a size not known */
	/* buffer_size_kb counts the pages' data, not their headers. */
	passes = (uint64_t)rt_session_buffer_kb(p->session) * 1024 / p->layout->page_data.size /
		 max_pages + 2;
	return passes > 1u << 16 ? 1u << 16 : (unsigned int)passes;
}

bool rt_pump_all_eof(const struct rt_pump *p)
{
	for (int cpu = 0; cpu < p->ncpus; cpu++)
		if (!p->readers[cpu].eof)
			return false;
	return true;
}

/*
 * A CPU that went offline keeps its buffer, which is still read, so nothing
 * is lost; its subscribers are told, so that a quiet CPU and an offline one
 * do not look the same.
 */
void rt_pump_check_cpus(struct rt_pump *p)
{
	if (!p->watch_cpus)
		return;
	for (int cpu = 0; cpu < p->ncpus; cpu++) {
		int online = rt_cpu_online(cpu);

		if (online < 0 || p->offline[cpu] == !online)
			continue;
		p->offline[cpu] = !online;
		rt_log(LOG_NOTICE, "cpu%d went %s; its buffer is still read", cpu,
		       online ? "online" : "offline");
		if (p->to.server)
			rt_server_cpu_state(p->to.server, (unsigned int)cpu, online);
	}
}

void rt_pump_totals(const struct rt_pump *p, struct rt_pump_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (int cpu = 0; cpu < p->ncpus; cpu++) {
		t->records += p->acct[cpu].records;
		t->kernel_lost += p->acct[cpu].kernel_lost;
		t->malformed_pages += p->acct[cpu].malformed_pages;
	}
}

/*
 * Every CPU's counters into st (have[cpu] false where they could not be
 * read); the events the kernel still holds.
 */
static unsigned long long read_counters(struct rt_pump *p, struct rt_cpu_stats *st, bool *have)
{
	unsigned long long left = 0;

	for (int cpu = 0; cpu < p->ncpus; cpu++) {
		have[cpu] = !rt_session_cpu_stats(p->session, cpu, &st[cpu]);
		if (have[cpu])
			left += st[cpu].entries;
	}
	return left;
}

/*
 * A read of trace_pipe_raw may return nothing while the buffer is not
 * empty (the kernel found no page to hand over at that instant), so the
 * stop drains until the kernel's own counters say empty, up to 10 passes,
 * and accounts with the counters read after the last one.
 */
void rt_pump_finish(struct rt_pump *p)
{
	/* A read error is said by the drain; what was read is accounted. */
	bool failed = rt_pump_drain(p, 0) < 0;
	struct rt_cpu_stats *stats = calloc((size_t)p->ncpus, sizeof(*stats));
	bool *have = calloc((size_t)p->ncpus, sizeof(*have));

	if (!stats || !have) {
		rt_log(LOG_ERR, "out of memory at the stop: the kernel's counters are not compared");
		goto out;
	}
	/* A captured tree's counters are the capture's, not ours to drain. */
	for (int tries = 0; read_counters(p, stats, have) && p->watch_cpus && !failed &&
			    tries < 10; tries++)
		failed = rt_pump_drain(p, 0) < 0;
	for (int cpu = 0; cpu < p->ncpus; cpu++) {
		struct cpu_account *a = &p->acct[cpu];
		const struct rt_cpu_stats *st = &stats[cpu];
		uint64_t lost, unread;

		if (!have[cpu])
			continue;
		/* Still in the buffer after every try: they go with the instance. */
		unread = p->watch_cpus ? st->entries : 0;
		if (unread)
			rt_log(LOG_ERR, "cpu%d: %" PRIu64 " event(s) still in the kernel's buffer "
			       "after the last read; reported lost", cpu, unread);
		/* Overwritten after the last page read, or lost without a page to say so. */
		lost = (st->overrun > a->kernel_lost ? st->overrun - a->kernel_lost : 0) +
		       st->commit_overrun + st->dropped_events - a->other_lost + unread;
		if (!lost)
			continue;
		a->kernel_lost += st->overrun > a->kernel_lost ? st->overrun - a->kernel_lost : 0;
		a->other_lost = st->commit_overrun + st->dropped_events;
		kernel_loss(p, cpu, lost, true, 0, false);
		if (p->to.text)
			fprintf(p->to.text, "# cpu %d: lost %" PRIu64 " events at the end\n", cpu,
				lost);
	}
	if (p->to.server) {
		rt_server_end_page(p->to.server);
		/* Those Lost frames go now: the stop waits for queues to drain, not for a pass. */
		rt_server_flush(p->to.server);
	}
	if (p->to.nats)
		rt_nats_end_drain(p->to.nats);
out:
	free(stats);
	free(have);
}

void rt_pump_report(const struct rt_pump *p, struct rt_session *session)
{
	/* Each is a page a slow socket subscriber still held when the ring came round to it. */
	rt_log(LOG_INFO, "page ring: %u slots per CPU, %zu bytes; %" PRIu64 " page(s) copied out of "
	       "a slot for a subscriber's queue", p->ring->ring.head.slots, p->ring->ring.size,
	       p->ring->copies);
	for (int cpu = 0; cpu < p->ncpus; cpu++) {
		const struct cpu_account *a = &p->acct[cpu];
		struct rt_cpu_stats st = { 0 };

		/* A tree without stats files reports zeros for the kernel's side. */
		(void)rt_session_cpu_stats(session, cpu, &st);
		rt_log(LOG_INFO,
		       "cpu%d: %llu pages, %llu records, %llu unknown, lost %llu (%llu pages without "
		       "a count, reconciled with the overrun counter), %llu malformed pages; kernel: "
		       "overrun %llu, commit_overrun %llu, dropped %llu, read %llu, unread %llu",
		       cpu, p->readers[cpu].pages, a->records, a->unknown, a->kernel_lost,
		       a->missed_pages_inexact, a->malformed_pages, st.overrun, st.commit_overrun,
		       st.dropped_events, st.read_events, st.entries);
		/*
		 * Our own instance, read by us alone: every event the kernel handed
		 * over is a record we walked, or one in a malformed page.
		 */
		if (p->watch_cpus && rt_session_owned(session) && !a->malformed_pages &&
		    st.read_events != a->records)
			rt_log(LOG_ERR, "cpu%d: the kernel handed over %llu events, %llu records were "
			       "read from its pages", cpu, st.read_events, a->records);
	}
}

void rt_pump_cpu_totals(const struct rt_pump *p, int cpu, struct rt_pump_totals *t)
{
	const struct cpu_account *a = &p->acct[cpu];

	*t = (struct rt_pump_totals){
		.records = a->records,
		.kernel_lost = a->kernel_lost,
		.malformed_pages = a->malformed_pages,
		.pages = p->readers[cpu].pages,
		.unknown = a->unknown,
		.inexact_pages = a->missed_pages_inexact,
	};
}

bool rt_pump_recover_page(struct rt_pump *p, const struct rt_ring *prev, int cpu, uint64_t page,
			  struct rt_why *why)
{
	struct rt_ring_page_info held;
	struct rt_page_result res;
	struct rt_page_buf *buf;
	size_t len = prev->head.page_size;
	const uint8_t *room;
	uint64_t held_page;

	room = rt_ring_room_left(prev, (unsigned int)cpu, page, &held_page, &held);
	if (!room) {
		rt_why_set(why, 0, "its slot was not being written");
		return false;
	}
	if (len > p->ring->ring.head.page_size) {
		rt_why_set(why, 0, "its page of %zu bytes is larger than this ring's", len);
		return false;
	}
	if (rt_decode_page(p->decoder, (unsigned int)cpu, room, len, NULL, NULL, &res)) {
		rt_why_set(why, 0, "its room holds no page (%s)", res.error);
		return false;
	}
	if (!res.records) {
		rt_why_set(why, 0, "its room holds a page without records");
		return false;
	}
	/*
	 * The commit had begun (it rewrites the header after the read), or the
	 * room holds a page newer than the one the slot held a lap before: the
	 * read had taken it from the kernel. Else the read never came.
	 */
	if (held_page != page && held.len && res.timestamp <= held.last_ts) {
		rt_why_set(why, 0, "its room holds page %" PRIu64 " of the lap before (time %" PRIu64
			   ", that page's last %" PRIu64 ")", held_page, res.timestamp,
			   held.last_ts);
		return false;
	}
	buf = rt_page_ring_begin(p->ring, (unsigned int)cpu);
	if (!buf) {
		rt_why_set(why, 0, "no memory for it");
		return false;
	}
	memcpy(buf->data, room, len);
	buf->len = (unsigned int)len;
	p->readers[cpu].pages++;
	return on_page(cpu, buf, (unsigned int)len, p) == 0;
}

uint64_t rt_pump_count_unread(struct rt_pump *p, int cpu)
{
	struct cpu_account *a = &p->acct[cpu];
	struct rt_cpu_stats st;

	/* Our own instance, read by ringtapd alone: what the kernel handed over, a run read. */
	if (!p->watch_cpus || !rt_session_owned(p->session) || a->malformed_pages ||
	    rt_session_cpu_stats(p->session, cpu, &st) || st.read_events <= a->records)
		return 0;
	a->unread_lost = st.read_events - a->records;
	return a->unread_lost;
}

void rt_pump_restore_cpu(struct rt_pump *p, int cpu, const struct rt_state_cpu *from)
{
	struct cpu_account *a = &p->acct[cpu];

	p->readers[cpu].pages = from->pages;
	a->records = from->records;
	a->kernel_lost = from->kernel_lost;
	a->unknown = from->unknown;
	a->missed_pages_inexact = from->inexact_pages;
	a->malformed_pages = from->ring.malformed;
	/* What the ring's next slot says came before it (zeros from the first release's state). */
	a->ring_lost = from->ring.kernel_lost;
	a->ring_read = from->ring.events_before - from->ring.kernel_lost;
	if (from->ring.kernel_lost > from->ring.events_before)
		a->ring_read = 0;
	a->ring_inexact = from->ring.kernel_inexact;
	/* For a reader that starts before the CPU's next page. */
	rt_page_ring_set_next(p->ring, (unsigned int)cpu, &(struct rt_ring_page_info){
		.events_before = from->ring.events_before, .kernel_lost = from->ring.kernel_lost,
		.kernel_inexact = from->ring.kernel_inexact, .malformed = from->ring.malformed });
}

/* Where the CPU's page `page` is: the previous ringtapd's area or this one's; NULL: gone. */
static const struct rt_ring *area_of(const struct rt_pump *p, unsigned int cpu, uint64_t page)
{
	const struct rt_ring *prev = rt_page_ring_prev(p->ring);

	if (prev && page < rt_ring_written(prev, cpu))
		return page >= rt_ring_oldest(prev, cpu) ? prev : NULL;
	return page >= rt_ring_oldest(&p->ring->ring, cpu) ? &p->ring->ring : NULL;
}

bool rt_pump_ring_holds(const struct rt_pump *p, const struct rt_pub_place *from,
			uint64_t *missing)
{
	*missing = 0;
	for (int cpu = 0; cpu < p->ncpus; cpu++) {
		struct rt_ring_page_info n;
		uint64_t next = rt_page_ring_next(p->ring, (unsigned int)cpu, &n);

		if (from[cpu].page > next)
			return false;
		if (from[cpu].page < next && !area_of(p, (unsigned int)cpu, from[cpu].page))
			*missing += next - from[cpu].page;
	}
	return !*missing;
}

struct republish {
	struct rt_pump *pump;
	struct rt_nats *nats;
};

static int on_republished(const struct rt_record *rec, void *ctx)
{
	struct republish *r = ctx;

	rt_nats_record(r->nats, rec);
	return 0;
}

/*
 * The page read (rd) again to NATS alone, as on_page offered it: the same
 * records (a malformed page's walk stops where it stopped then) and losses,
 * so the publisher counts and numbers them as it did.
 */
static void republish_page(struct republish *r, unsigned int cpu, const uint8_t *page,
			   const struct rt_ring_read *rd, uint64_t *after_ts)
{
	uint64_t lost = rd->lost_kernel + rd->lost_kernel_inexact;
	struct rt_page_result res;

	rt_decode_page(r->pump->decoder, cpu, page, rd->len, on_republished, r, &res);
	if (rd->flags & RT_RING_MALFORMED)
		rt_nats_kernel_loss(r->nats, cpu, 0, false, *after_ts, 0);
	else if (lost)
		rt_nats_kernel_loss(r->nats, cpu, lost, !rd->lost_kernel_inexact, *after_ts,
				    rd->first_ts);
	rt_nats_end_page(r->nats);
	if (rd->records)
		*after_ts = rd->last_ts;
}

int rt_pump_republish(struct rt_pump *p, struct rt_nats *n, const struct rt_pub_place *from,
		      uint64_t *pages)
{
	struct republish r = { p, n };
	uint8_t *page = malloc(p->ring->ring.head.page_size);
	int ret = 0;

	*pages = 0;
	if (!page)
		return -ENOMEM;
	/*
	 * The dead run's batches began at its marks (a note is taken when
	 * nothing is held), so a page a message never names a batch it
	 * stored with fewer records than it holds: at worst it stores a
	 * page's records twice, which a collector takes once.
	 */
	rt_nats_republishing(n, true);
	for (int cpu = 0; cpu < p->ncpus && !ret; cpu++) {
		struct rt_ring_page_info next_counts;
		uint64_t next = rt_page_ring_next(p->ring, (unsigned int)cpu, &next_counts);
		uint64_t after_ts = 0;
		struct rt_ring_cursor cur;

		rt_ring_cursor_start(&cur, from[cpu].page, from[cpu].events_before,
				     from[cpu].kernel_lost, from[cpu].kernel_inexact,
				     from[cpu].malformed);
		while (cur.page < next && !ret) {
			const struct rt_ring *area = area_of(p, (unsigned int)cpu, cur.page);
			struct rt_ring_read rd;

			if (!area || area->head.page_size > p->ring->ring.head.page_size) {
				ret = -ESTALE;
				break;
			}
			ret = rt_ring_read(area, (unsigned int)cpu, &cur, page,
					   p->ring->ring.head.page_size, &rd);
			if (ret == 1 && rd.lost_ring)
				ret = -ESTALE;
			if (ret != 1)
				break;
			ret = 0;
			republish_page(&r, (unsigned int)cpu, page, &rd, &after_ts);
			++*pages;
		}
		if (ret == 0 && cur.page < next)
			ret = -EBADMSG;
		rt_nats_ring_at(n, (unsigned int)cpu, next, &next_counts);
	}
	rt_nats_end_drain(n);
	rt_nats_republishing(n, false);
	free(page);
	return ret;
}
