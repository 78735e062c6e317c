// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "conn.h"
#include "handover.h"
#include "log.h"
#include "nats.h"
#include "nats-mark.h"
#include "page_ring.h"
#include "replay.h"
#include "pump.h"
#include "ring_conn.h"
#include "ringtapd.h"
#include "util.h"

/* How long a restart waits for JetStream to acknowledge what was published: a stop's grace. */
#define NATS_HANDOVER_GRACE_US (5 * 1000000ULL)
/* A state bigger than this is not one of ours (queues are bounded by max_queue_kb). */
#define STATE_MAX_BYTES (1ULL << 32)

static void forget_state(struct ringtapd *d)
{
	rt_state_release(&d->state);
	free(d->state_bytes);
	d->state_bytes = NULL;
	d->have_state = false;
}

static int read_state(struct ringtapd *d, int fd, struct rt_why *why)
{
	struct stat st;
	size_t got = 0;

	if (fstat(fd, &st))
		return rt_why_set(why, -errno, "the state memfd: %s", strerror(errno));
	if (st.st_size <= 0 || (unsigned long long)st.st_size > STATE_MAX_BYTES)
		return rt_why_set(why, -EINVAL, "the state memfd holds %lld bytes",
				  (long long)st.st_size);
	d->state_bytes = malloc((size_t)st.st_size);
	if (!d->state_bytes)
		return rt_why_set(why, -ENOMEM, "out of memory for the state");
	while (got < (size_t)st.st_size) {
		ssize_t n = pread(fd, d->state_bytes + got, (size_t)st.st_size - got, (off_t)got);

		if (n <= 0)
			return rt_why_set(why, n ? -errno : -EIO, "reading the state memfd");
		got += (size_t)n;
	}
	return rt_state_read(d->state_bytes, got, &d->state, why);
}

void ringtapd_adopt_begin(struct ringtapd *d)
{
	const char *name = d->opts.instance_name ?: rt_config_default_str(RT_CONF_INSTANCE);
	struct rt_why why = { "" };

	if (rt_fdstore_collect(&d->store) || !rt_fdstore_any(&d->store))
		goto fresh;
	/* A planned restart's state, else the one kept from the start: a crash. */
	d->crashed = d->store.state_fd < 0;
	if (d->store.state_fd < 0 && d->store.crash_fd < 0) {
		rt_why_set(&why, 0, "no state came back with them");
		goto fresh;
	}
	if (read_state(d, d->crashed ? d->store.crash_fd : d->store.state_fd, &why))
		goto fresh;
	d->have_state = true;
	/* The tokens it gave stay good: its subscribers resume with them. */
	if (d->state.secret_len == sizeof(d->secret)) {
		memcpy(&d->secret, d->state.secret, sizeof(d->secret));
		d->have_secret = true;
	}
	if (d->opts.tracing_dir || strcmp(d->state.instance, name)) {
		rt_why_set(&why, 0, "they were of instance '%s', this run uses '%s'", d->state.instance,
			   d->opts.tracing_dir ? d->opts.tracing_dir : name);
		goto fresh;
	}
	if (!d->store.ncpu_fds) {
		rt_why_set(&why, 0, "no trace_pipe_raw came back");
		goto fresh;
	}
	d->opts.adopt = true;
	d->opts.adopt_buffer_kb = (size_t)d->state.buffer_kb;
	return;
fresh:
	if (rt_fdstore_any(&d->store))
		rt_log(LOG_WARNING, "not resuming from what the previous ringtapd kept: %s; its "
		       "subscribers' connections are closed and it starts afresh", why.text);
	forget_state(d);
	d->crashed = false;
	rt_fdstore_release(&d->store);
}

void ringtapd_adopt_trace_fds(struct ringtapd *d)
{
	int ncpus = rt_session_ncpus(d->session), ret = 0;

	if (!d->opts.adopt)
		return;
	if (!rt_session_adopted(d->session)) {
		rt_log(LOG_WARNING, "the previous ringtapd's instance is gone: starting afresh, its "
		       "subscribers' connections closed");
		forget_state(d);
		rt_fdstore_release(&d->store);
		return;
	}
	for (int cpu = 0; cpu < ncpus && !ret; cpu++) {
		int fd = rt_fdstore_take_cpu(&d->store, cpu);

		if (fd >= 0 && (ret = rt_session_give_trace_fd(d->session, cpu, fd)))
			close(fd);
	}
	if (ret)
		rt_log(LOG_WARNING, "keeping the handed-over trace fds: %s; their CPUs are opened "
		       "again (a half-read page there is lost)", strerror(-ret));
}

/* One subscriber the previous ringtapd handed over, served again on fd. */
static bool resume_one(struct ringtapd *d, const struct rt_state_sub *k, int fd)
{
	struct rt_conn *c = conn_new(d->server, fd);
	Ringtap__Subscription *sub = NULL;
	struct rt_why why = { "" };
	int ret = 0, added;

	if (!c) {
		close(fd);
		rt_log(LOG_WARNING, "client %s (pid %d): out of memory to resume it", k->name,
		       (int)k->pid);
		return false;
	}
	if (k->transport == RT_STATE_TRANSPORT_RING && !rt_pump_ring_continued(d->pump))
		ret = rt_why_set(&why, -ESTALE, "the page ring it read could not be carried on");
	else if (k->catch_up_len && !rt_pump_ring_continued(d->pump))
		ret = rt_why_set(&why, -ESTALE, "the page ring it was catching up from could not "
				 "be carried on");
	else if (k->transport == RT_STATE_TRANSPORT_RING &&
		 !(c->ring = ring_reader_new((unsigned int)rt_pump_ncpus(d->pump))))
		ret = rt_why_set(&why, -ENOMEM, "out of memory");
	/* Only a reader that takes a new ring was kept. */
	c->ring_moves = c->ring != NULL;
	c->authorized = true;
	c->uid = k->uid;
	c->pid = k->pid;
	snprintf(c->name, sizeof(c->name), "%s", k->name);
	snprintf(c->owner, sizeof(c->owner), "%s", k->owner);
	if ((added = conn_add(d->server, c, EPOLLIN)) < 0) {
		rt_log(LOG_WARNING, "client %s (pid %d): %s", k->name, (int)k->pid, strerror(-added));
		return false;
	}
	/* The rest of a frame begun, and what was queued: first, whatever follows. */
	if (k->unsent_len && rt_subscriber_push(&c->out.sub, k->unsent, k->unsent_len)) {
		conn_close(c, "out of memory for what it was owed");
		return false;
	}
	c->out.sub.delivered = k->delivered;
	c->out.sub.dropped = k->dropped;
	c->out.sub.kernel_lost = k->kernel_lost;
	if (k->subscription_len &&
	    !(sub = ringtap__subscription__unpack(NULL, k->subscription_len, k->subscription)))
		ret = rt_why_set(&why, -EINVAL, "its subscription could not be read back");
	c->out.numbered = k->numbered;
	if (!ret)
		ret = conn_resume(c, (Ringtap__Encoding)k->encoding, k->version, sub, k->schema_sent,
				  k->schema_sent_len, &why);
	if (sub)
		ringtap__subscription__free_unpacked(sub, NULL);
	/* RAW: the Schemas it had cover the same events in this layout, unless it has more now. */
	c->out.raw_schemas = (size_t)k->raw_schemas;
	/* The new ring, after what it was owed: its library maps it and reads on at its pages. */
	if (!ret && c->ring && (ret = conn_ring_start(c)))
		rt_why_set(&why, ret, "cannot send it the new page ring");
	/* Catching up when the last one stopped: on from where its queue ended. */
	if (!ret && k->catch_up_len)
		ret = conn_catch_up(c, k->catch_up, k->catch_up_len, &why);
	if (ret) {
		char msg[320];

		snprintf(msg, sizeof(msg), "ringtapd restarted and cannot serve this subscription "
			 "again: %s", why.text[0] ? why.text : strerror(-ret));
		conn_send_error(c, -ret, msg);
		return false;
	}
	conn_want_write(c, true);
	rt_log(LOG_INFO, "client %s (pid %d uid %u) resumed after the restart, %zu bytes owed%s",
	       c->name, (int)c->pid, (unsigned int)c->uid, k->unsent_len,
	       c->ring ? ", reading the page ring" :
	       c->replay ? ", catching up from the page ring" : "");
	return true;
}

/*
 * After a crash: each CPU's counts as the ring's last commit left them
 * (the crashed ringtapd's, read-only now): the records' numbers go on, so
 * subscribers resume by them, and ring readers' counts never go back.
 */
static void restore_from_ring(struct ringtapd *d)
{
	const struct rt_ring *prev = rt_page_ring_prev(rt_pump_ring(d->pump));

	for (int cpu = 0; prev && cpu < rt_pump_ncpus(d->pump); cpu++) {
		struct rt_ring_page_info n;
		struct rt_why why = { "" };
		uint64_t next, unread;

		if (rt_ring_left_at(prev, (unsigned int)cpu, &next, &n)) {
			rt_log(LOG_WARNING, "cpu %d: the crashed ringtapd's ring counts disagree; "
			       "its records are numbered from 1 again", cpu);
			continue;
		}
		rt_pump_restore_cpu(d->pump, cpu, &(struct rt_state_cpu){
			.pages = next, .records = n.events_before - n.kernel_lost,
			.kernel_lost = n.kernel_lost,
			.ring = { next, n.events_before, n.kernel_lost, n.kernel_inexact,
				  n.malformed },
		});
		/* Read from the kernel, not committed: the kernel has it no more, the ring does. */
		if (rt_pump_recover_page(d->pump, prev, cpu, next, &why))
			rt_log(LOG_NOTICE, "cpu %d: the page the crashed ringtapd had read and "
			       "not yet passed on was taken from its ring (page %" PRIu64 ")", cpu,
			       next);
		else
			rt_log(LOG_INFO, "cpu %d: the crashed ringtapd's ring goes on at page "
			       "%" PRIu64 " (%" PRIu64 " events before it): no page read and not "
			       "passed on to recover, %s", cpu, next, n.events_before, why.text);
		/* A read the ring never saw (a crash closer to it than the recovery knows): told. */
		unread = rt_pump_count_unread(d->pump, cpu);
		if (unread)
			rt_log(LOG_WARNING, "cpu %d: the crashed ringtapd took %" PRIu64 " events "
			       "from the kernel that its ring does not hold: reported lost before "
			       "the CPU's next page", cpu, unread);
	}
	rt_log(LOG_NOTICE, "resumed after a crash: the instance's buffers as they were%s; "
	       "subscribers resume with their tokens from the page ring",
	       prev ? "" : " (the ring could not be carried on: its pages are not served)");
}

void ringtapd_adopt_end(struct ringtapd *d)
{
	unsigned int resumed = 0, gone = 0;

	if (!d->have_state)
		return;
	/* Whoever was subscribed has a while to come back before its events are switched off. */
	if (d->server)
		rt_server_hold_selection(d->server);
	if (d->crashed) {
		if (d->pump)
			restore_from_ring(d);
		d->nats_mark_fd = rt_fdstore_take_nats(&d->store);
		forget_state(d);
		rt_fdstore_release(&d->store);
		return;
	}
	for (uint32_t cpu = 0; d->pump && cpu < d->state.ncpus; cpu++)
		if ((int)cpu < rt_pump_ncpus(d->pump))
			rt_pump_restore_cpu(d->pump, (int)cpu, &d->state.cpus[cpu]);
	for (uint32_t i = 0; i < d->state.n_subs; i++) {
		const struct rt_state_sub *k = &d->state.subs[i];
		int fd = rt_fdstore_take_conn(&d->store, k->id);

		if (fd < 0) {
			rt_log(LOG_INFO, "client %s (pid %d) left while ringtapd restarted", k->name,
			       (int)k->pid);
			gone++;
		} else if (!d->server) {
			close(fd);
		} else {
			resumed += resume_one(d, k, fd);
		}
	}
	rt_log(LOG_NOTICE, "resumed after a restart: the instance's buffers as they were, %u of %u "
	       "subscriber(s) (%u left meanwhile)", resumed, d->state.n_subs, gone);
	/* Its memfd serves again; the last run waited for every answer, so no mark is read. */
	d->nats_mark_fd = rt_fdstore_take_nats(&d->store);
	forget_state(d);
	rt_fdstore_release(&d->store);
}

/* --- the handover -------------------------------------------------------- */

/* Why the next ringtapd cannot serve a connection, or NULL: a Unix socket's subscriber mid-stream. */
static const char *not_keepable(const struct rt_conn *c)
{
	if (c->tcp)
		return "TCP (TLS cannot be handed on)";
	if (c->state != CONN_STREAMING)
		return c->state == CONN_HELLO ? "no subscription yet" : "closing";
	if (c->ring && !c->ring_moves)
		return "a page ring reader whose library takes no new ring (an older libringtap)";
	/* Its bytes would go on, the descriptor they carry would not. */
	if (c->pass_fd >= 0)
		return "its Ring frame and the ring's descriptor are not sent yet";
	if (c->leaving || c->said_bye || c->peer_shut || c->dead)
		return "it is leaving";
	if (!c->kept_sub.data)
		return "its subscription could not be kept (out of memory)";
	return NULL;
}

/* Every byte queued for s and not yet written, without taking it from the queue. */
static int copy_unsent(const struct rt_subscriber *s, struct rt_buf *out)
{
	unsigned int max = 64, n;
	struct iovec *iov = NULL;

	for (;;) {
		struct iovec *more = realloc(iov, max * sizeof(*iov));

		if (!more) {
			free(iov);
			return -ENOMEM;
		}
		iov = more;
		n = rt_subscriber_peekv(s, iov, max);
		if (n < max)
			break;
		max *= 2;
	}
	for (unsigned int i = 0; i < n; i++)
		if (rt_buf_put(out, iov[i].iov_base, iov[i].iov_len)) {
			free(iov);
			return -ENOMEM;
		}
	free(iov);
	return 0;
}

/* The state's bytes in a file of their own: a memfd, else an unnamed file in /tmp. */
static int state_file(const struct rt_buf *b)
{
	int fd = memfd_create("ringtapd-state", MFD_CLOEXEC);
	size_t done = 0;

	if (fd < 0)
		fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (done < b->len) {
		ssize_t n = write(fd, b->data + done, b->len - done);

		if (n < 0) {
			int err = errno;

			close(fd);
			return -err;
		}
		done += (size_t)n;
	}
	return fd;
}

struct kept {
	struct rt_state st;
	struct rt_conn **conns;
	struct rt_buf *unsent;
	struct rt_buf *catch_up;	/* per kept conn catching up: its places */
	uint32_t n;
};

static void kept_release(struct kept *k)
{
	/* One more than kept: what a failure left half made at index n. */
	for (uint32_t i = 0; i <= k->n; i++) {
		if (k->unsent)
			rt_buf_free(&k->unsent[i]);
		if (k->catch_up)
			rt_buf_free(&k->catch_up[i]);
	}
	free(k->unsent);
	free(k->catch_up);
	free(k->conns);
	free(k->st.cpus);
	free(k->st.subs);
}

/*
 * What every state says, a restart's or the one kept for a crash: the
 * instance and its settings, the CPUs, the ring's geometry (the next
 * ringtapd writes on in a ring of its own: the seal refuses it a writable
 * mapping of this one) and the resume tokens' secret.
 */
static struct rt_state state_head(const struct ringtapd *d)
{
	const struct rt_page_ring *ring = rt_pump_ring(d->pump);

	return (struct rt_state){
		.instance = d->opts.instance_name ?: rt_config_default_str(RT_CONF_INSTANCE),
		.clock = rt_session_clock(d->session) ?: "",
		/* As set, not as the kernel rounded it: the next one compares its setting. */
		.buffer_kb = d->opts.buffer_kb,
		.ncpus = (uint32_t)rt_pump_ncpus(d->pump),
		.ring_slots = ring->ring.head.slots,
		.ring_page_size = ring->ring.head.page_size,
		.secret = (const uint8_t *)&d->secret,
		.secret_len = sizeof(d->secret),
	};
}

/* The state of the subscribers that can be kept and of every CPU; 0 or -errno. */
static int collect(struct ringtapd *d, struct kept *k)
{
	struct rt_server *srv = d->server;
	int ncpus = rt_pump_ncpus(d->pump);

	struct rt_page_ring *ring = rt_pump_ring(d->pump);

	k->st = state_head(d);
	k->st.cpus = calloc((size_t)ncpus, sizeof(*k->st.cpus));
	k->st.subs = calloc(srv->n_conns ?: 1, sizeof(*k->st.subs));
	k->conns = calloc(srv->n_conns ?: 1, sizeof(*k->conns));
	k->unsent = calloc(srv->n_conns + 1, sizeof(*k->unsent));
	k->catch_up = calloc(srv->n_conns + 1, sizeof(*k->catch_up));
	if (!k->st.cpus || !k->st.subs || !k->conns || !k->unsent || !k->catch_up)
		return -ENOMEM;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		struct rt_pump_totals t;

		struct rt_state_cpu *o = &k->st.cpus[cpu];
		struct rt_ring_page_info next;
		uint64_t written = rt_page_ring_next(ring, (unsigned int)cpu, &next);

		rt_pump_cpu_totals(d->pump, cpu, &t);
		*o = (struct rt_state_cpu){
			.pages = t.pages, .records = t.records, .kernel_lost = t.kernel_lost,
			.ring = { written, next.events_before, next.kernel_lost,
				  next.kernel_inexact, next.malformed },
			.unknown = t.unknown, .inexact_pages = t.inexact_pages,
		};
	}
	for (struct rt_conn *c = srv->conns; c; c = c->next) {
		struct rt_subscriber *s = &c->out.sub;
		struct rt_state_sub *o = &k->st.subs[k->n];

		const char *why = not_keepable(c);

		/* Losses it is owed go into its queue, and as much as the socket takes now. */
		if (!why && rt_subscriber_flush_losses(s))
			why = "out of memory for its loss reports";
		if (!why && conn_flush(c) < 0)
			why = "its link failed";
		if (why) {
			rt_log(LOG_INFO, "client %s (pid %d) is not kept across the restart: %s",
			       c->name, (int)c->pid, why);
			continue;
		}
		if (copy_unsent(s, &k->unsent[k->n]) ||
		    (c->replay && replay_pack_places(c, (unsigned int)ncpus, &k->catch_up[k->n])))
			return -ENOMEM;
		if (k->unsent[k->n].len)
			rt_log(LOG_INFO, "client %s (pid %d): %zu bytes owed go with it, %zu of the "
			       "first frame's sent already", c->name, (int)c->pid, k->unsent[k->n].len,
			       s->head_off);
		*o = (struct rt_state_sub){
			.id = k->n, .encoding = (uint32_t)c->out.encoding, .version = c->version,
			.uid = (uint32_t)c->uid, .pid = (int32_t)c->pid,
			.latency_ms = c->latency_ms, .name = c->name, .owner = c->owner,
			.subscription = c->kept_sub.data, .subscription_len = c->kept_sub.len,
			.schema_sent = s->schema_sent, .schema_sent_len = s->events_bits / 8,
			.raw_schemas = c->out.raw_schemas,
			.delivered = s->delivered, .dropped = s->dropped, .kernel_lost = s->kernel_lost,
			.unsent = k->unsent[k->n].data, .unsent_len = k->unsent[k->n].len,
			.transport = c->ring ? RT_STATE_TRANSPORT_RING : RT_STATE_TRANSPORT_SOCKET,
			.numbered = c->out.numbered,
			.catch_up = k->catch_up[k->n].data, .catch_up_len = k->catch_up[k->n].len,
		};
		k->conns[k->n++] = c;
	}
	k->st.n_subs = k->n;
	return 0;
}

/* Everything into the store, the state last: without it the next start takes nothing. */
static int store(struct ringtapd *d, struct kept *k, int state_fd)
{
	char name[32];
	int ret = 0;

	for (int cpu = 0; !ret && cpu < rt_pump_ncpus(d->pump); cpu++) {
		snprintf(name, sizeof(name), "cpu%d", cpu);
		if (rt_pump_fd(d->pump, cpu) >= 0)
			ret = rt_fdstore_put(name, rt_pump_fd(d->pump, cpu), true);
	}
	for (uint32_t i = 0; !ret && i < k->n; i++) {
		snprintf(name, sizeof(name), "conn%u", i);
		ret = rt_fdstore_put(name, k->conns[i]->fd, false);
	}
	if (!ret)
		ret = rt_fdstore_put("ring", rt_pump_ring(d->pump)->fd, false);
	if (!ret)
		ret = rt_fdstore_put("state", state_fd, false);
	if (!ret)
		ret = rt_fdstore_barrier();
	return ret;
}

/* What a failed handover put in the store comes out again: the stop goes on as before. */
static void unstore(struct ringtapd *d, const struct kept *k)
{
	struct rt_fdstore fs = { .active = true, .state_fd = -1, .ring_fd = -1, .crash_fd = -1,
				 .nats_fd = -1 };
	char name[32];
	int ret = 0;

	for (int cpu = 0; !ret && cpu < rt_pump_ncpus(d->pump); cpu++) {
		snprintf(name, sizeof(name), "cpu%d", cpu);
		ret = rt_fdstore_note(&fs, name);
	}
	for (uint32_t i = 0; !ret && i < k->n; i++) {
		snprintf(name, sizeof(name), "conn%u", i);
		ret = rt_fdstore_note(&fs, name);
	}
	if (!ret)
		ret = rt_fdstore_note(&fs, "ring");
	if (!ret)
		ret = rt_fdstore_note(&fs, "state");
	rt_fdstore_release(&fs);
}

/*
 * What was published is acknowledged before the next ringtapd takes the
 * instance on: it publishes from where this one stopped reading, under a
 * session of its own, and cannot send again what this one still holds.
 * Waits as a stop does (NATS_HANDOVER_GRACE_US); what is still
 * unacknowledged then is given up and said, as at a stop.
 */
static void nats_settle(struct rt_nats *n)
{
	uint64_t deadline = rt_monotonic_ns() + NATS_HANDOVER_GRACE_US * 1000;
	struct rt_nats_stats st;

	while (!rt_nats_drained(n) && rt_monotonic_ns() < deadline) {
		/* Losses owed become reports, and the reports messages. */
		rt_nats_poll(n);
		usleep(5000);
	}
	if (rt_nats_drained(n))
		return;
	rt_nats_get_stats(n, &st);
	rt_log(LOG_WARNING, "restart: %" PRIu64 " NATS message(s) still unacknowledged after %u s "
	       "are given up, as at a stop", st.pending,
	       (unsigned int)(NATS_HANDOVER_GRACE_US / 1000000));
}

int ringtapd_hand_over(struct ringtapd *d)
{
	struct rt_buf bytes = { 0 };
	struct kept k = { 0 };
	int ret, state_fd = -1;

	if (!rt_fdstore_available() || !d->server || !d->pump || d->opts.tracing_dir ||
	    d->stopping || !rt_session_owned(d->session))
		return -ECANCELED;
	ret = rt_fdstore_restarting();
	if (ret <= 0) {
		if (ret < 0)
			rt_log(LOG_WARNING, "cannot ask systemd whether this stop is a restart (%s): "
			       "stopping for good", strerror(-ret));
		return -ECANCELED;
	}
	/*
	 * What the buffers hold now goes out from here, not after the next
	 * ringtapd's start: the subscribers' silence is the restart alone.
	 */
	if (rt_pump_drain(d->pump, 0) < 0)
		rt_log(LOG_WARNING, "restart: the last pass failed; the next ringtapd reads on");
	if (d->nats)
		nats_settle(d->nats);
	ret = collect(d, &k);
	if (!ret)
		ret = rt_state_write(&k.st, &bytes);
	if (!ret && (state_fd = state_file(&bytes)) < 0)
		ret = state_fd;
	if (!ret && (ret = store(d, &k, state_fd)))
		unstore(d, &k);
	if (state_fd >= 0)
		close(state_fd);
	rt_buf_free(&bytes);
	if (ret) {
		rt_log(LOG_WARNING, "restart: keeping the session in systemd's fd store failed (%s); "
		       "stopping as for a stop", strerror(-ret));
		kept_release(&k);
		return ret;
	}
	/* Nothing that goes now may switch an event off: the kernel keeps recording for the next. */
	d->server->stopping = true;
	for (uint32_t i = 0; i < k.n; i++)
		conn_free(k.conns[i]);
	while (d->server->conns)
		conn_close(d->server->conns, "ringtapd restarts; this connection cannot be kept");
	rt_session_disown(d->session);
	/* As stopped already: the loop's end must not switch tracing off nor read on. */
	d->stopping = true;
	rt_log(LOG_NOTICE, "restart: the instance (%d CPUs, tracing on) and %u subscriber(s) kept in "
	       "systemd's fd store for the next ringtapd", rt_pump_ncpus(d->pump), k.n);
	kept_release(&k);
	return 0;
}

/* --- kept from the start, for a crash --------------------------------------- */

/* What is published, hashed (FNV-1a): the events' globs and the host's name. */
uint64_t ringtapd_nats_key(const struct ringtapd *d)
{
	uint64_t h = 14695981039346656037ULL;
	const char *host = d->host_id.host.hostname ? d->host_id.host.hostname : "";

	for (char **g = d->nats_globs; g && *g; g++)
		for (const char *c = *g; ; c++) {
			h = (h ^ (uint8_t)*c) * 1099511628211ULL;
			if (!*c)
				break;
		}
	for (const char *c = host; *c; c++)
		h = (h ^ (uint8_t)*c) * 1099511628211ULL;
	return h;
}

struct rt_nats_mark *ringtapd_nats_mark(struct ringtapd *d, struct rt_publisher_from *from,
					struct rt_pub_place **places)
{
	int ncpus = rt_pump_ncpus(d->pump), ret;
	struct rt_nats_mark *mark = NULL;
	uint64_t missing = 0;

	*places = NULL;
	/* Kept where the trace fds are: under systemd, for an instance of our own. */
	if (!rt_fdstore_available() || d->opts.tracing_dir || !rt_session_owned(d->session)) {
		if (d->nats_mark_fd >= 0)
			close(d->nats_mark_fd);
		d->nats_mark_fd = -1;
		return NULL;
	}
	ret = rt_nats_mark_new(&mark, d->nats_mark_fd, (unsigned int)ncpus,
			       d->cfg.num[RT_CONF_NATS_MAX_PENDING]);
	d->nats_mark_fd = -1;
	if (ret) {
		rt_log(LOG_WARNING, "NATS: no memfd to keep where publishing stands (%s): after a "
		       "crash, publishing starts anew", strerror(-ret));
		return NULL;
	}
	for (int cpu = 0; cpu < ncpus; cpu++) {
		struct rt_ring_page_info n;
		uint64_t next = rt_page_ring_next(rt_pump_ring(d->pump), (unsigned int)cpu, &n);

		rt_nats_mark_ring_at(mark, (unsigned int)cpu, next, &n);
	}
	if (!d->crashed)
		return mark;
	*places = calloc((size_t)ncpus, sizeof(**places));
	ret = *places ? rt_nats_mark_resume(mark, ringtapd_nats_key(d), from, *places) : -ENOMEM;
	if (ret == -ESTALE)
		rt_log(LOG_WARNING, "NATS: the crashed ringtapd published other events or "
		       "another host's name");
	else if (!ret && !rt_pump_ring_holds(d->pump, *places, &missing))
		ret = -ERANGE;
	if (ret) {
		rt_log(LOG_WARNING, "NATS: publishing starts a new session: the crashed ringtapd's "
		       "mark %s; what JetStream had not acknowledged of it may be missing",
		       ret == -ERANGE ? "is not where the page ring is" :
		       ret == -ESTALE ? "is of another publishing" : strerror(-ret));
		if (missing)
			rt_log(LOG_WARNING, "NATS: %" PRIu64 " page(s) after the mark are gone "
			       "from the ring", missing);
		free(*places);
		*places = NULL;
	}
	return mark;
}

void ringtapd_nats_republish(struct ringtapd *d, const struct rt_pub_place *places)
{
	uint64_t pages;
	int ret = rt_pump_republish(d->pump, d->nats, places, &pages);

	if (ret) {
		rt_log(LOG_ERR, "NATS: publishing the crashed ringtapd's pages again stopped after "
		       "%" PRIu64 ": %s; the rest may be missing from the stream", pages,
		       strerror(-ret));
		/* Its numbers stop here: what follows must not take ids it gave. */
		if (rt_nats_start_over(d->nats, ringtapd_nats_key(d)))
			rt_log(LOG_ERR, "NATS: no memory for a new session");
		else
			rt_log(LOG_NOTICE, "NATS: publishing goes on in a new session");
	} else
		rt_log(LOG_NOTICE, "NATS: resumed after a crash with the crashed ringtapd's "
		       "session and numbers: %" PRIu64 " page(s) it may not have had stored "
		       "published again from the ring (JetStream keeps each message once by its "
		       "id)", pages);
}

/* The store's names for what the start keeps, noted for the stop that takes them out. */
static int arm_put(struct ringtapd *d, const char *name, int fd, bool no_poll)
{
	int ret = rt_fdstore_put(name, fd, no_poll);

	return ret ?: rt_fdstore_note(&d->armed, name);
}

void ringtapd_arm_store(struct ringtapd *d)
{
	struct rt_page_ring *ring = d->pump ? rt_pump_ring(d->pump) : NULL;
	int ncpus = d->pump ? rt_pump_ncpus(d->pump) : 0, state_fd = -1, ret = 0;
	struct rt_buf bytes = { 0 };
	struct rt_state st;
	char name[32];

	d->armed = (struct rt_fdstore){ .state_fd = -1, .ring_fd = -1, .crash_fd = -1,
					.nats_fd = -1 };
	if (!rt_fdstore_available() || !d->server || !ring || d->opts.tracing_dir ||
	    !rt_session_owned(d->session))
		return;
	st = state_head(d);
	st.at_start = true;
	/* Its counts are the ring's: none here. */
	st.cpus = calloc((size_t)ncpus ?: 1, sizeof(*st.cpus));
	ret = st.cpus ? rt_state_write(&st, &bytes) : -ENOMEM;
	if (!ret && (state_fd = state_file(&bytes)) < 0)
		ret = state_fd;
	for (int cpu = 0; !ret && cpu < ncpus; cpu++) {
		snprintf(name, sizeof(name), "cpu%d", cpu);
		if (rt_pump_fd(d->pump, cpu) >= 0)
			ret = arm_put(d, name, rt_pump_fd(d->pump, cpu), true);
	}
	ret = ret ?: arm_put(d, "ring", ring->fd, false);
	ret = ret ?: arm_put(d, "crash", state_fd, false);
	ret = ret ?: rt_fdstore_barrier();
	if (state_fd >= 0)
		close(state_fd);
	free(st.cpus);
	rt_buf_free(&bytes);
	if (ret) {
		rt_log(LOG_WARNING, "keeping the instance in systemd's fd store for a crash failed "
		       "(%s): a crash starts afresh", strerror(-ret));
		rt_fdstore_release(&d->armed);
		return;
	}
	rt_log(LOG_INFO, "the trace fds, page ring and resume secret are in systemd's fd store: "
	       "after a crash the next ringtapd goes on from them");
}

void ringtapd_arm_nats(struct ringtapd *d)
{
	int ret;

	if (!d->armed.active || !d->nats || rt_nats_kept_fd(d->nats) < 0)
		return;
	ret = arm_put(d, "nats", rt_nats_kept_fd(d->nats), false);
	ret = ret ?: rt_fdstore_barrier();
	if (ret)
		rt_log(LOG_WARNING, "keeping where NATS publishing stands in systemd's fd store "
		       "failed (%s): after a crash, publishing starts anew", strerror(-ret));
}

void ringtapd_disarm_store(struct ringtapd *d)
{
	if (!d->armed.active)
		return;
	/* A handover left them for the next ringtapd: only the names are forgotten. */
	if (rt_session_owned(d->session))
		rt_fdstore_release(&d->armed);
	else
		rt_fdstore_forget(&d->armed);
}
