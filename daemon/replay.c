// SPDX-License-Identifier: LGPL-2.1-or-later
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "conn_io.h"
#include "decode.h"
#include "fanout.h"
#include "layout.h"
#include "log.h"
#include "page_ring.h"
#include "replay.h"
#include "ring.h"
#include "token.h"
#include "tracefs.h"
#include "why.h"

/* Where the catch-up is on one CPU. */
struct replay_cpu {
	bool wanted;			/* selected: read until the writer's place */
	bool started;			/* a page was read: later losses are the ring's to tell */
	bool in_prev;			/* reading the previous ringtapd's area */
	bool placed;			/* its cursor set at the start (replay_spill) */
	uint64_t after;			/* the last seq the subscriber has */
	uint64_t last_ts;		/* of the last page read; 0: none yet */
	struct rt_ring_cursor cur;
};

struct conn_replay {
	struct replay_env env;
	struct replay_cpu *cpus;
	unsigned int ncpus;
	uint8_t *page;			/* one page copied out of the ring */
	const char *nomem;		/* what an allocation failed for, for the caller to say */
	bool armed;			/* its CPUs chosen, once its subscription was in force */
	bool spilled;			/* its queue filled (replay_spill): not a resume */
	uint64_t pages, records, lost;	/* for the log line at its end */
};

/* The record's seq, from the page's first; those the subscriber has are passed over. */
struct replay_walk {
	struct rt_conn *c;
	uint64_t first_seq, after;
	uint64_t index;
	uint64_t queued;
};

static void peer_of(const struct rt_conn *c, char *out, size_t size)
{
	rt_token_peer(out, size, c->tcp, (unsigned int)c->uid, c->common_name);
}

static uint64_t next_seq(const struct rt_page_ring *pr, unsigned int cpu)
{
	struct rt_ring_page_info next;

	rt_page_ring_next(pr, cpu, &next);
	return next.events_before >= next.kernel_lost ? next.events_before - next.kernel_lost : 0;
}

int replay_welcome(const struct replay_env *env, struct rt_conn *c, uint32_t version,
		   Ringtap__Encoding enc, struct rt_buf *out)
{
	unsigned int ncpus = (unsigned int)rt_session_ncpus(env->session);
	uint8_t token[RT_TOKEN_SIZE];
	char peer[RT_TOKEN_PEER_MAX];
	struct rt_welcome_resume r = { .token = token, .token_len = sizeof(token) };
	uint64_t *start = calloc(ncpus ?: 1, sizeof(*start));
	int ret;

	if (!start)
		return -ENOMEM;
	peer_of(c, peer, sizeof(peer));
	ret = rt_token_make(env->secret, peer, token);
	/* A resumed one starts where it said; a new one after what was read so far. */
	for (unsigned int cpu = 0; cpu < ncpus; cpu++)
		start[cpu] = c->replay ? c->replay->cpus[cpu].after :
			     env->ring ? next_seq(env->ring, cpu) : 0;
	r.start_seq = start;
	r.n_start_seq = ncpus;
	if (!ret)
		ret = rt_encode_welcome_resume_frame(version, enc, env->host, env->layout, &r,
						     out);
	free(start);
	return ret;
}

int replay_check(const struct replay_env *env, struct rt_conn *c, const Ringtap__Resume *resume,
		 struct rt_why *why)
{
	unsigned int ncpus = (unsigned int)rt_session_ncpus(env->session);
	char peer[RT_TOKEN_PEER_MAX];
	int ret;

	peer_of(c, peer, sizeof(peer));
	ret = rt_token_check(env->secret, peer, resume->token.data, resume->token.len, why);
	if (ret)
		return ret;
	if (resume->n_cpus != resume->n_seqs)
		return rt_why_set(why, -EINVAL, "Resume has %zu CPUs and %zu seqs", resume->n_cpus,
				  resume->n_seqs);
	if (!env->ring)
		return rt_why_set(why, -EOPNOTSUPP, "this ringtapd keeps no page ring to resume "
				  "from");
	/* A place ahead of what was read: numbers of another instance (one started afresh). */
	for (size_t i = 0; i < resume->n_cpus; i++) {
		uint32_t cpu = resume->cpus[i];

		if (cpu >= ncpus)
			return rt_why_set(why, -EINVAL, "Resume names cpu%" PRIu32 "; this "
					  "machine has cpu0 to cpu%u", cpu, ncpus - 1);
		if (resume->seqs[i] > next_seq(env->ring, cpu))
			return rt_why_set(why, -EINVAL, "Resume's seq %" PRIu64 " on cpu%" PRIu32
					  " is ahead of this ringtapd (%" PRIu64 " read there)",
					  resume->seqs[i], cpu, next_seq(env->ring, cpu));
	}
	return 0;
}

/* A catch-up for c, each CPU from the writer's place until told otherwise. */
static int replay_new(const struct replay_env *env, struct rt_conn *c)
{
	unsigned int ncpus = (unsigned int)rt_session_ncpus(env->session);
	struct conn_replay *r = calloc(1, sizeof(*r));

	if (!r || !(r->cpus = calloc(ncpus ?: 1, sizeof(*r->cpus))) ||
	    !(r->page = malloc(env->ring->ring.head.page_size))) {
		c->replay = r;
		replay_free(c);
		return -ENOMEM;
	}
	r->ncpus = ncpus;
	r->env = *env;
	c->replay = r;
	/* A CPU it does not name: from the live stream on, as a new subscriber. */
	for (unsigned int cpu = 0; cpu < ncpus; cpu++)
		r->cpus[cpu].after = next_seq(env->ring, cpu);
	return 0;
}

int replay_begin(const struct replay_env *env, struct rt_conn *c, const Ringtap__Resume *resume,
		 struct rt_why *why)
{
	int ret = replay_check(env, c, resume, why);

	if (ret)
		return ret;
	if (replay_new(env, c))
		return rt_why_set(why, -ENOMEM, "out of memory");
	for (size_t i = 0; i < resume->n_cpus; i++)
		c->replay->cpus[resume->cpus[i]].after = resume->seqs[i];
	return 0;
}

/* rc reads on from the writer's place on cpu: it has everything before it. */
static void place_at_writer(const struct rt_page_ring *pr, unsigned int cpu, struct replay_cpu *rc)
{
	struct rt_ring_page_info n;
	uint64_t at = rt_page_ring_next(pr, cpu, &n);

	rt_ring_cursor_start(&rc->cur, at, n.events_before, n.kernel_lost, n.kernel_inexact,
			     n.malformed);
	rc->after = n.events_before - n.kernel_lost;
	rc->placed = rc->started = true;
}

int replay_spill(const struct replay_env *env, struct rt_conn *c, unsigned int cpu)
{
	unsigned int ncpus = (unsigned int)rt_session_ncpus(env->session);
	struct rt_ring_page_info next;
	struct rt_ring_cursor at;
	struct replay_cpu *rc;
	uint64_t page;
	int ret;

	if (!env->ring || c->replay || cpu >= ncpus)
		return -EOPNOTSUPP;
	page = rt_page_ring_next(env->ring, cpu, &next);
	/*
	 * The page just read is the writer's last: its counts before it start
	 * the cursor. A malformed one holds no records to catch up with.
	 */
	if (!page || (ret = rt_ring_cursor_at(&env->ring->ring, cpu, page - 1, &at)) ||
	    next.malformed != at.malformed)
		return -ESTALE;
	if ((ret = replay_new(env, c)))
		return ret;
	c->replay->spilled = true;
	/* Every CPU placed now: pages read on the others before the next flush are its too. */
	for (unsigned int other = 0; other < ncpus; other++)
		place_at_writer(env->ring, other, &c->replay->cpus[other]);
	rc = &c->replay->cpus[cpu];
	rc->cur = at;
	rc->after = at.events - at.kernel_lost;
	return 0;
}

void replay_places(const struct rt_conn *c, struct replay_place *out, unsigned int ncpus)
{
	const struct conn_replay *r = c->replay;

	for (unsigned int cpu = 0; cpu < ncpus && r && cpu < r->ncpus; cpu++) {
		const struct replay_cpu *rc = &r->cpus[cpu];
		uint64_t read = rc->cur.events - rc->cur.kernel_lost;

		/* A page read went into its queue whole: its place is past it. */
		out[cpu] = (struct replay_place){
			.after = rc->started && read > rc->after ? read : rc->after,
			.placed = rc->started, .cur = rc->cur,
		};
	}
}

int replay_adopt(const struct replay_env *env, struct rt_conn *c, const struct replay_place *at,
		 unsigned int ncpus, struct rt_why *why)
{
	const struct rt_ring *prev;

	if (!env->ring)
		return rt_why_set(why, -EOPNOTSUPP, "this ringtapd keeps no page ring to catch up "
				  "from");
	if (ncpus != (unsigned int)rt_session_ncpus(env->session))
		return rt_why_set(why, -EINVAL, "its places are for %u CPUs, not %d", ncpus,
				  rt_session_ncpus(env->session));
	for (unsigned int cpu = 0; cpu < ncpus; cpu++)
		if (at[cpu].after > next_seq(env->ring, cpu) ||
		    (at[cpu].placed && at[cpu].cur.events < at[cpu].cur.kernel_lost))
			return rt_why_set(why, -EINVAL, "its place on cpu%u (%" PRIu64 ") is not "
					  "in the page ring", cpu, at[cpu].after);
	if (replay_new(env, c))
		return rt_why_set(why, -ENOMEM, "out of memory");
	prev = rt_page_ring_prev(env->ring);
	for (unsigned int cpu = 0; cpu < ncpus; cpu++) {
		struct replay_cpu *rc = &c->replay->cpus[cpu];

		rc->after = at[cpu].after;
		if (!at[cpu].placed)
			continue;
		/* Its cursor with the counts it had: losses it was told are not told again. */
		rc->cur = at[cpu].cur;
		rc->placed = rc->started = true;
		rc->in_prev = prev && rc->cur.page < rt_ring_written(prev, cpu);
	}
	c->replay->spilled = true;
	return 0;
}

/* Per CPU, little endian: after, the cursor's page (UINT64_MAX: not placed) and its counts. */
enum { PLACE_WORDS = 6 };

int replay_pack_places(const struct rt_conn *c, unsigned int ncpus, struct rt_buf *out)
{
	struct replay_place *at = calloc(ncpus ?: 1, sizeof(*at));
	int ret = at ? 0 : -ENOMEM;

	if (at)
		replay_places(c, at, ncpus);
	for (unsigned int cpu = 0; !ret && cpu < ncpus; cpu++) {
		const struct rt_ring_cursor *k = &at[cpu].cur;
		uint64_t w[PLACE_WORDS] = {
			at[cpu].after, at[cpu].placed ? k->page : UINT64_MAX, k->events,
			k->kernel_lost, k->kernel_inexact, k->malformed,
		};

		for (int i = 0; i < PLACE_WORDS; i++)
			w[i] = htole64(w[i]);
		ret = rt_buf_put(out, w, sizeof(w));
	}
	free(at);
	return ret;
}

int replay_adopt_packed(const struct replay_env *env, struct rt_conn *c, const uint8_t *bytes,
			size_t len, struct rt_why *why)
{
	size_t n = len / (PLACE_WORDS * sizeof(uint64_t));
	struct replay_place *at;
	int ret;

	if (len % (PLACE_WORDS * sizeof(uint64_t)) || !n)
		return rt_why_set(why, -EINVAL, "its catch-up places (%zu bytes) cannot be read",
				  len);
	at = calloc(n, sizeof(*at));
	if (!at)
		return rt_why_set(why, -ENOMEM, "out of memory");
	for (size_t cpu = 0; cpu < n; cpu++) {
		uint64_t w[PLACE_WORDS];

		memcpy(w, bytes + cpu * sizeof(w), sizeof(w));
		for (int i = 0; i < PLACE_WORDS; i++)
			w[i] = le64toh(w[i]);
		at[cpu] = (struct replay_place){
			.after = w[0], .placed = w[1] != UINT64_MAX,
			.cur = { .page = w[1], .events = w[2], .kernel_lost = w[3],
				 .kernel_inexact = w[4], .malformed = w[5] },
		};
	}
	ret = replay_adopt(env, c, at, (unsigned int)n, why);
	free(at);
	return ret;
}

void replay_reselect(struct rt_conn *c)
{
	struct conn_replay *r = c->replay;

	if (!r || !r->armed)
		return;
	for (unsigned int cpu = 0; cpu < r->ncpus; cpu++) {
		struct replay_cpu *rc = &r->cpus[cpu];
		bool wanted = rt_subscriber_selects_cpu(&c->out.sub, cpu);

		/* A CPU it adds: from now on, as the live stream would give it. */
		if (wanted && !rc->wanted)
			place_at_writer(r->env.ring, cpu, rc);
		rc->wanted = wanted;
	}
}

/*
 * The subscriber has records of the next area already: it starts there. One
 * that has exactly this area's last record starts on that record's page, so
 * that the losses before the next area's first page are told.
 */
static bool past_area(const struct rt_ring *area, unsigned int cpu, uint64_t after)
{
	struct rt_ring_page_info n;
	uint64_t next;

	return !rt_ring_left_at(area, cpu, &next, &n) && after > n.events_before - n.kernel_lost;
}

/* Once its subscription is in force: the CPUs it selects are those to catch up. */
static void replay_arm(struct rt_conn *c)
{
	const struct rt_page_ring *pr = c->replay->env.ring;
	const struct rt_ring *prev = rt_page_ring_prev(pr);
	struct conn_replay *r = c->replay;

	r->armed = true;
	for (unsigned int cpu = 0; cpu < r->ncpus; cpu++) {
		struct replay_cpu *rc = &r->cpus[cpu];
		uint64_t from;

		/*
		 * Every CPU it selects, those it has all of too: pages that come
		 * meanwhile must reach it by the catch-up, not by the live stream.
		 */
		rc->wanted = rt_subscriber_selects_cpu(&c->out.sub, cpu);
		if (rc->placed)
			continue;
		/* Nothing to skip: from the writer's place, with the counts before it. */
		if (rc->after >= next_seq(pr, cpu)) {
			place_at_writer(pr, cpu, rc);
			continue;
		}
		rc->in_prev = prev && rt_ring_oldest(prev, cpu) < rt_ring_written(prev, cpu) &&
			      !past_area(prev, cpu, rc->after);
		/* Found by the slots' counts: the pages before its place are not read again. */
		from = rt_ring_page_after(rc->in_prev ? prev : &pr->ring, cpu, rc->after);
		rt_ring_cursor_start(&rc->cur, from, 0, 0, 0, 0);
	}
}

static int on_replayed(const struct rt_record *in, void *ctx)
{
	struct replay_walk *w = ctx;
	struct rt_conn *c = w->c;
	const struct replay_env *env = &c->replay->env;
	const struct rt_field_desc *pidf = env->layout->common_pid;
	struct rt_record rec = *in;
	const char *what = NULL;
	uint64_t pid = 0;

	rec.seq = w->first_seq + w->index++;
	if (rec.seq <= w->after || !rec.event)
		return 0;
	fanout_next_record(env->fan);
	if (pidf)
		rt_record_read_common(&rec, env->layout, pidf, &pid);
	if (fanout_record(env->fan, &c->out, &rec, (int32_t)pid, &what))
		c->replay->nomem = what;
	w->queued++;
	return 0;
}

/* What was lost between the subscriber's place and this page, told as the live stream would. */
static void report_losses(struct rt_conn *c, unsigned int cpu, struct replay_cpu *rc,
			  const struct rt_ring_read *rd, uint64_t first_seq)
{
	struct rt_subscriber *s = &c->out.sub;

	if (!rc->started) {
		rc->started = true;
		/* Older than the ring's oldest page: gone, all of them counted. */
		if (first_seq > rc->after + 1) {
			rt_subscriber_drop_span(s, cpu, first_seq - rc->after - 1, 0, rd->first_ts);
			c->replay->lost += first_seq - rc->after - 1;
		}
		return;
	}
	/* Losses before a page it had records of were reported to it then. */
	if (first_seq <= rc->after)
		return;
	if (rd->lost_kernel)
		rt_subscriber_kernel_loss(s, cpu, rd->lost_kernel, true, rc->last_ts, rd->first_ts);
	for (uint64_t i = 0; i < rd->lost_kernel_inexact + rd->lost_malformed; i++)
		rt_subscriber_kernel_loss(s, cpu, 0, false, rc->last_ts, rd->first_ts);
	if (rd->lost_ring) {
		/* Written after the last page it read, before this one. */
		rt_subscriber_drop_span(s, cpu, rd->lost_ring, rc->last_ts, rd->first_ts);
		c->replay->lost += rd->lost_ring;
	}
	/* The page itself malformed: its records uncounted, told as the live stream tells it. */
	if (rd->flags & RT_RING_MALFORMED)
		rt_subscriber_kernel_loss(s, cpu, 0, false, rc->last_ts, 0);
}

static int queue_raw_page(struct rt_conn *c, unsigned int cpu, const struct rt_ring_read *rd,
			  uint64_t first_seq)
{
	struct rt_page_buf *copy = rt_page_buf_new(rd->len);
	struct fanout_page p = {
		.cpu = cpu, .page = copy, .len = rd->len, .records = rd->records,
		.first_ts = rd->first_ts, .last_ts = rd->last_ts, .first_seq = first_seq,
	};
	int ret;

	if (!copy) {
		rt_subscriber_drop_span(&c->out.sub, cpu, rd->records, rd->first_ts, rd->last_ts);
		return -ENOMEM;
	}
	memcpy(copy->data, c->replay->page, rd->len);
	ret = fanout_page(c->replay->env.fan, &c->out, &p);
	rt_page_buf_put(copy);
	return ret;
}

/* The next page on the CPU into c's queue: 1, 0 when caught up there, -errno. */
static int replay_page(struct rt_conn *c, unsigned int cpu, struct replay_cpu *rc)
{
	const struct replay_env *env = &c->replay->env;
	const struct rt_ring *prev = rt_page_ring_prev(env->ring);
	const struct rt_ring *area = rc->in_prev && prev ? prev : &env->ring->ring;
	struct rt_ring_read rd;
	uint64_t first_seq;
	int ret;

	ret = rt_ring_read(area, cpu, &rc->cur, c->replay->page, area->head.page_size, &rd);
	if (ret == 0 && area != &env->ring->ring) {
		/* The old area read out: the new one goes on with the next page's number. */
		rc->in_prev = false;
		return 1;
	}
	if (ret <= 0)
		return ret;
	first_seq = rc->cur.events - rd.records - rc->cur.kernel_lost + 1;
	report_losses(c, cpu, rc, &rd, first_seq);
	if (!(rd.flags & RT_RING_MALFORMED) && rd.records)
		rc->last_ts = rd.last_ts;
	c->replay->pages++;
	if ((rd.flags & RT_RING_MALFORMED) || first_seq + rd.records - 1 <= rc->after ||
	    !rd.records)
		return 1;
	if (c->out.encoding == RINGTAP__ENCODING__RAW) {
		c->replay->records += rd.records;
		return queue_raw_page(c, cpu, &rd, first_seq) ? -ENOMEM : 1;
	} else {
		struct replay_walk w = { .c = c, .first_seq = first_seq, .after = rc->after };
		struct rt_page_result res;

		if (!*env->decoder && (ret = rt_decoder_new(env->decoder, env->layout)))
			return ret;
		rt_decode_page(*env->decoder, cpu, c->replay->page, rd.len, on_replayed, &w,
			       &res);
		c->replay->records += w.queued;
	}
	return 1;
}

int replay_step(struct rt_conn *c, const char **nomem)
{
	struct conn_replay *r = c->replay;
	struct rt_subscriber *s = &c->out.sub;
	size_t half = rt_subscriber_queue_limit(s) / 2;
	bool caught_up = true;

	*nomem = NULL;
	if (!r)
		return 0;
	if (!r->armed)
		replay_arm(c);
	/*
	 * Live only once every CPU is at the writer's place in the same step:
	 * nothing is written between, so no page falls between the catch-up
	 * and the live stream.
	 */
	for (unsigned int cpu = 0; cpu < r->ncpus; cpu++) {
		struct replay_cpu *rc = &r->cpus[cpu];
		int ret = 1;

		while (rc->wanted && ret > 0) {
			if (rt_subscriber_queued_bytes(s) >= half)
				break;
			ret = replay_page(c, cpu, rc);
			if (ret < 0)
				return ret;
			if (rt_subscriber_end_page(s))
				r->nomem = "for a batch";
			*nomem = r->nomem;
		}
		caught_up &= !rc->wanted || ret == 0;
	}
	conn_want_write(c, true);
	if (!caught_up)
		return 0;
	/* Its queue filled: frequent for a slow reader, and no news once it is live again. */
	rt_log(r->spilled ? LOG_DEBUG : LOG_INFO, "client %s (pid %d): %s the page ring, "
	       "%" PRIu64 " page(s), %" PRIu64 " record(s) past its place read again, %" PRIu64
	       " no longer held (reported lost)", c->name, (int)c->pid,
	       r->spilled ? "caught up from" : "resumed from", r->pages, r->records, r->lost);
	replay_free(c);
	return 0;
}

void replay_abandon(struct rt_conn *c)
{
	struct conn_replay *r = c->replay;
	struct replay_place *at;

	if (!r)
		return;
	at = calloc(r->ncpus ?: 1, sizeof(*at));
	if (at)
		replay_places(c, at, r->ncpus);
	for (unsigned int cpu = 0; at && cpu < r->ncpus; cpu++) {
		struct replay_cpu *rc = &r->cpus[cpu];
		struct rt_ring_page_info next;
		uint64_t read;

		if (r->armed ? !rc->wanted : !rt_subscriber_selects_cpu(&c->out.sub, cpu))
			continue;
		rt_page_ring_next(r->env.ring, cpu, &next);
		read = next.events_before - next.kernel_lost;
		/* What the kernel lost meanwhile, as the catch-up would have told it. */
		if (rc->started) {
			struct rt_subscriber *s = &c->out.sub;

			uint64_t kernel = next.kernel_lost - rc->cur.kernel_lost;

			if (next.kernel_lost > rc->cur.kernel_lost)
				rt_subscriber_kernel_loss(s, cpu, kernel, true, rc->last_ts, 0);
			for (uint64_t i = rc->cur.kernel_inexact + rc->cur.malformed;
			     i < next.kernel_inexact + next.malformed; i++)
				rt_subscriber_kernel_loss(s, cpu, 0, false, rc->last_ts, 0);
		}
		if (read > at[cpu].after)
			rt_subscriber_drop_span(&c->out.sub, cpu, read - at[cpu].after, rc->last_ts,
						0);
	}
	free(at);
	replay_free(c);
}

void replay_free(struct rt_conn *c)
{
	struct conn_replay *r = c->replay;

	c->replay = NULL;
	if (!r)
		return;
	free(r->cpus);
	free(r->page);
	free(r);
}
