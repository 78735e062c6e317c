/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * publish: what ringtapd publishes to NATS JetStream (docs/PROTOCOL.md,
 * NATS), as messages: the subjects (ringtap.<host>.<system>.<event>,
 * ringtap.<host>._hello, ringtap.<host>._lost), a Published wrapper around
 * each Welcome, Schema and Lost and around each event's records of a page
 * (one message: a fleet's event rate is not JetStream's message rate), with
 * the boot, the daemon's start and a per-CPU sequence number, each message's
 * Nats-Msg-Id (msgid.h), a Schema before an event's first record (again after
 * each Welcome), and a page's records held until its kernel loss report is
 * out. Whatever finds no room is dropped, counted on its CPU and reported on
 * the _lost subject as soon as there is room: the sequence numbers and the
 * reports account for every record offered.
 *
 * Pure: messages go to a sink. nats.c's sink queues them for its publisher
 * thread and says whether there is room (nats_max_pending); a test's sink
 * collects them.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decode.h"
#include "encode.h"
#include "publish-mark.h"

/* Room for a message id: a host token, a boot id and four numbers. */
#define RT_PUB_MSG_ID_MAX 192

struct rt_pub_msg {
	struct rt_pub_msg *next;
	uint64_t order;		/* the sink's: its place among the messages handed over */
	const char *subject;	/* in data, after the payload */
	const char *id;		/* its Nats-Msg-Id (msgid.h), in data after the subject */
	size_t len;		/* of the payload, a Published message */
	uint64_t ts;		/* a record's, for a drop's report */
	uint8_t data[];
};

/* Frees a list of messages (next-linked). */
void rt_pub_msg_free_list(struct rt_pub_msg *m);

struct rt_publisher_sink {
	bool (*room)(void *ctx);			/* one more message may go now */
	void (*send)(void *ctx, struct rt_pub_msg *m);	/* takes m */
	void *ctx;
};

struct rt_publisher_stats {
	uint64_t records;	/* handed to the sink */
	uint64_t dropped;	/* records that found no room */
	uint64_t failed;	/* records handed over whose publish failed */
	uint64_t unreported;	/* records lost whose report is still owed */
};

struct rt_publisher;

/*
 * globs (NULL-terminated): the events published. session: the daemon's
 * start (realtime ns), which tells its runs apart. The first Welcome is
 * sent at once.
 */
int rt_publisher_new(struct rt_publisher **out, const struct rt_host *host, uint64_t session,
		     const struct rt_layout *layout, const char *const *globs, unsigned int ncpus,
		     const struct rt_publisher_sink *sink);
/*
 * A run that goes on with another's numbering (a crash's successor,
 * publish-mark.h): its session, the first number of its control messages,
 * and per CPU (places, NULL: all 0) the numbers its records and kernel
 * losses go on from.
 */
struct rt_publisher_from {
	uint64_t session;
	uint64_t control;
	const struct rt_pub_place *places;
};
int rt_publisher_new_from(struct rt_publisher **out, const struct rt_host *host,
			  const struct rt_publisher_from *from, const struct rt_layout *layout,
			  const char *const *globs, unsigned int ncpus,
			  const struct rt_publisher_sink *sink);
void rt_publisher_free(struct rt_publisher *p);
/* The CPU's numbers now (seq, kernel_reports of at; the rest is left). */
void rt_publisher_place(const struct rt_publisher *p, unsigned int cpu, struct rt_pub_place *at);
uint64_t rt_publisher_session(const struct rt_publisher *p);

/* ringtap.<host>.>: every subject of this host. */
const char *rt_publisher_subjects(const struct rt_publisher *p);

/* The Welcome again, and every Schema again before its event's next record (a new stream). */
void rt_publisher_welcome(struct rt_publisher *p);

/* A page's records are held until rt_publisher_end_page, after its loss report: a message
 * per event. */
void rt_publisher_record(struct rt_publisher *p, const struct rt_record *rec);
void rt_publisher_kernel_loss(struct rt_publisher *p, unsigned int cpu, uint64_t count, bool exact,
			      uint64_t after_ts, uint64_t before_ts);
void rt_publisher_end_page(struct rt_publisher *p);
/*
 * With a message bound (bytes, 0: a page a message, the default): a CPU's
 * pages are held together, one message per event, until a message would
 * pass the bound, another CPU's page or a loss comes, or the drain ends.
 * The message's seq is its first page's; its id still names its first record.
 */
void rt_publisher_set_max_message(struct rt_publisher *p, size_t bytes);
/* The end of a drain: what is held goes. */
void rt_publisher_end_drain(struct rt_publisher *p);

/*
 * What a message handed over carried, for when its publish failed (any
 * thread may ask), with its CPU and records: RT_PUB_FAILED_RECORD (a page's),
 * RT_PUB_FAILED_REPORT (a Lost: its count, already counted lost once),
 * RT_PUB_FAILED_DESCRIPTION (a Welcome or Schema: rt_publisher_welcome sends
 * them again), or -EBADMSG for bytes that are not one of ours.
 */
enum { RT_PUB_FAILED_DESCRIPTION, RT_PUB_FAILED_RECORD, RT_PUB_FAILED_REPORT };
int rt_publisher_parse_failed(const uint8_t *data, size_t len, unsigned int *cpu,
			      uint64_t *records);
/* Records handed over whose publish failed: counted, and reported lost on their CPU. */
void rt_publisher_failed(struct rt_publisher *p, unsigned int cpu, uint64_t records);
/*
 * A Lost whose publish failed: its records are owed a report again, but were
 * counted once already (a failed report counted anew would count them twice,
 * and a stream that keeps failing would count them without end).
 */
void rt_publisher_report_again(struct rt_publisher *p, unsigned int cpu, uint64_t records);

/* The reports owed, where there is room. */
void rt_publisher_flush(struct rt_publisher *p);
/* Reports still owed. */
bool rt_publisher_owes(const struct rt_publisher *p);
void rt_publisher_get_stats(const struct rt_publisher *p, struct rt_publisher_stats *st);
