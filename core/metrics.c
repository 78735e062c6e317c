// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ringtapd's counters as text. Prometheus' conventions: a ringtap_ prefix,
 * counters ending in _total, base units (seconds, bytes), the CPU, the
 * subscriber and a loss's source as labels. The two exposition formats
 * differ in one point that matters: a counter's family is named without
 * _total in OpenMetrics (with # UNIT lines and # EOF), with it in 0.0.4,
 * whose checkers (promtool check metrics) want HELP and TYPE on the name
 * the samples carry.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "metrics.h"

struct family {
	const char *name;	/* without _total */
	bool counter;		/* else a gauge */
	const char *unit;	/* OpenMetrics' UNIT, the name's last word; NULL: none */
	const char *help;
};

static const struct family uptime = {
	"ringtap_uptime_seconds", false, "seconds", "Time since ringtapd started."
};
static const struct family cpu_pages = {
	"ringtap_cpu_pages_read", true, NULL, "Sub-buffers read from the CPU's ring buffer."
};
static const struct family cpu_events = {
	"ringtap_cpu_events_read", true, NULL, "Events read from the CPU's ring buffer."
};
static const struct family cpu_unknown = {
	"ringtap_cpu_events_unknown", true, NULL,
	"Events read of an event ringtapd has no format for."
};
static const struct family cpu_lost = {
	"ringtap_cpu_events_lost", true, NULL,
	"Events the kernel overwrote before they were read (source kernel)."
};
static const struct family cpu_malformed = {
	"ringtap_cpu_malformed_pages", true, NULL,
	"Sub-buffers skipped whole as malformed; their events cannot be counted."
};
static const struct family subscribers = {
	"ringtap_subscribers", false, NULL, "Subscribers streaming now."
};
static const struct family accepted = {
	"ringtap_subscribers_accepted", true, NULL, "Hellos answered with a Welcome."
};
static const struct family refused = {
	"ringtap_subscribers_refused", true, NULL, "Hellos answered with a Refusal."
};
static const struct family all_lost = {
	"ringtap_subscribers_events_lost", true, NULL,
	"Events dropped from subscribers' full queues, subscribers gone included."
};
static const struct family sub_delivered = {
	"ringtap_subscriber_events_delivered", true, NULL,
	"Events in frames written whole to the subscriber's socket."
};
static const struct family sub_lost = {
	"ringtap_subscriber_events_lost", true, NULL,
	"Events of the subscriber's selection it lost: its queue was full (queue) or the "
	"kernel overwrote them on its CPUs (kernel)."
};
static const struct family sub_queue_bytes = {
	"ringtap_subscriber_queue_bytes", false, "bytes", "Bytes queued for the subscriber now."
};
static const struct family sub_queue_events = {
	"ringtap_subscriber_queue_events", false, NULL, "Events queued for the subscriber now."
};
static const struct family sub_queue_limit = {
	"ringtap_subscriber_queue_limit_bytes", false, "bytes",
	"The subscriber's queue limit (max_queue_kb)."
};
static const struct family nats_published = {
	"ringtap_nats_events_published", true, NULL, "Events handed to NATS JetStream."
};
static const struct family nats_lost = {
	"ringtap_nats_events_lost", true, NULL,
	"Events not published: the publish buffer was full (queue) or the publish failed or "
	"was not acknowledged in time (publish)."
};
static const struct family nats_acked = {
	"ringtap_nats_messages_acknowledged", true, NULL, "Messages JetStream acknowledged."
};
static const struct family nats_backlog = {
	"ringtap_nats_backlog_messages", false, NULL,
	"Messages queued for NATS or not yet acknowledged."
};

struct out {
	struct rt_buf *b;
	enum rt_metrics_format format;
	int err;
};

__attribute__((format(printf, 2, 3))) static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || rt_buf_reserve(o->b, (size_t)n + 1)) {
		o->err = -ENOMEM;
		return;
	}
	va_start(ap, fmt);
	vsnprintf((char *)o->b->data + o->b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	o->b->len += (size_t)n;
}

static bool open_metrics(const struct out *o)
{
	return o->format == RT_METRICS_OPENMETRICS;
}

/* HELP, TYPE and UNIT, on the family's name as the format spells it. */
static void family(struct out *o, const struct family *f)
{
	const char *total = f->counter && !open_metrics(o) ? "_total" : "";

	put(o, "# HELP %s%s %s\n", f->name, total, f->help);
	put(o, "# TYPE %s%s %s\n", f->name, total, f->counter ? "counter" : "gauge");
	if (f->unit && open_metrics(o))
		put(o, "# UNIT %s %s\n", f->name, f->unit);
}

/* labels: "" or the label pairs without braces. */
static void sample(struct out *o, const struct family *f, const char *labels, uint64_t v)
{
	put(o, "%s%s%s%s%s %" PRIu64 "\n", f->name, f->counter ? "_total" : "", *labels ? "{" : "",
	    labels, *labels ? "}" : "", v);
}

/* A label value as both formats escape it: backslash, double quote, newline. */
static void escape(char *dst, size_t size, const char *src)
{
	size_t n = 0;

	for (; src && *src && n + 3 < size; src++) {
		if (*src == '\\' || *src == '"')
			dst[n++] = '\\';
		if (*src == '\n') {
			dst[n++] = '\\';
			dst[n++] = 'n';
			continue;
		}
		dst[n++] = *src;
	}
	dst[n] = '\0';
}

static void subscriber_labels(char *dst, size_t size, const Ringtap__SubscriberCounters *s,
			      const char *source)
{
	char name[256];

	escape(name, sizeof(name), s->client_name);
	snprintf(dst, size, "subscriber=\"%" PRIu64 "\",client=\"%s\",uid=\"%" PRIu32 "\"%s%s%s",
		 s->id, name, s->uid, source ? ",source=\"" : "", source ?: "", source ? "\"" : "");
}

/* One sample per CPU of a family: what picks the CPU's value. */
static void per_cpu(struct out *o, const Ringtap__Status *st, const struct family *f,
		    size_t field, const char *source)
{
	char labels[64];

	family(o, f);
	for (size_t i = 0; i < st->n_cpus; i++) {
		const Ringtap__CpuCounters *c = st->cpus[i];
		uint64_t v;

		memcpy(&v, (const char *)c + field, sizeof(v));
		snprintf(labels, sizeof(labels), "cpu=\"%" PRIu32 "\"%s%s%s", c->cpu,
			 source ? ",source=\"" : "", source ?: "", source ? "\"" : "");
		sample(o, f, labels, v);
	}
}

static void per_subscriber(struct out *o, const Ringtap__Status *st, const struct family *f,
			   size_t field, const char *source)
{
	char labels[400];

	for (size_t i = 0; i < st->n_subscribers; i++) {
		const Ringtap__SubscriberCounters *s = st->subscribers[i];
		uint64_t v;

		memcpy(&v, (const char *)s + field, sizeof(v));
		subscriber_labels(labels, sizeof(labels), s, source);
		sample(o, f, labels, v);
	}
}

static void exposition(struct out *o, const Ringtap__Status *st)
{
	char value[32];

	family(o, &uptime);
	snprintf(value, sizeof(value), "%" PRIu64 ".%03" PRIu64, st->uptime_ns / 1000000000,
		 st->uptime_ns / 1000000 % 1000);
	put(o, "%s %s\n", uptime.name, value);
	per_cpu(o, st, &cpu_pages, offsetof(Ringtap__CpuCounters, pages), NULL);
	per_cpu(o, st, &cpu_events, offsetof(Ringtap__CpuCounters, events), NULL);
	per_cpu(o, st, &cpu_unknown, offsetof(Ringtap__CpuCounters, unknown), NULL);
	per_cpu(o, st, &cpu_lost, offsetof(Ringtap__CpuCounters, kernel_lost), "kernel");
	per_cpu(o, st, &cpu_malformed, offsetof(Ringtap__CpuCounters, malformed_pages), NULL);
	family(o, &subscribers);
	sample(o, &subscribers, "", st->n_subscribers);
	family(o, &accepted);
	sample(o, &accepted, "", st->subscribers_accepted);
	family(o, &refused);
	sample(o, &refused, "", st->subscribers_refused);
	family(o, &all_lost);
	sample(o, &all_lost, "source=\"queue\"", st->lost_queue);
	family(o, &sub_delivered);
	per_subscriber(o, st, &sub_delivered, offsetof(Ringtap__SubscriberCounters, delivered),
		       NULL);
	family(o, &sub_lost);
	per_subscriber(o, st, &sub_lost, offsetof(Ringtap__SubscriberCounters, lost_queue),
		       "queue");
	per_subscriber(o, st, &sub_lost, offsetof(Ringtap__SubscriberCounters, lost_kernel),
		       "kernel");
	family(o, &sub_queue_bytes);
	per_subscriber(o, st, &sub_queue_bytes,
		       offsetof(Ringtap__SubscriberCounters, queued_bytes), NULL);
	family(o, &sub_queue_events);
	per_subscriber(o, st, &sub_queue_events,
		       offsetof(Ringtap__SubscriberCounters, queued_records), NULL);
	family(o, &sub_queue_limit);
	per_subscriber(o, st, &sub_queue_limit,
		       offsetof(Ringtap__SubscriberCounters, queue_limit_bytes), NULL);
	if (st->nats) {
		family(o, &nats_published);
		sample(o, &nats_published, "", st->nats->published);
		family(o, &nats_lost);
		sample(o, &nats_lost, "source=\"queue\"", st->nats->dropped);
		sample(o, &nats_lost, "source=\"publish\"", st->nats->failed);
		family(o, &nats_acked);
		sample(o, &nats_acked, "", st->nats->acknowledged);
		family(o, &nats_backlog);
		sample(o, &nats_backlog, "", st->nats->backlog);
	}
	if (open_metrics(o))
		put(o, "# EOF\n");
}

static const char *encoding_name(Ringtap__Encoding e)
{
	const ProtobufCEnumValue *v =
		protobuf_c_enum_descriptor_get_value(&ringtap__encoding__descriptor, (int)e);

	return v ? v->name : "?";
}

static void table(struct out *o, const Ringtap__Status *st)
{
	uint64_t s = st->uptime_ns / 1000000000, total[5] = { 0 };

	put(o, "ringtapd on %s, up %" PRIu64 "d %02" PRIu64 ":%02" PRIu64 ":%02" PRIu64 "\n",
	    st->hostname, s / 86400, s / 3600 % 24, s / 60 % 60, s % 60);
	put(o, "subscribers: %zu streaming, %" PRIu64 " accepted, %" PRIu64 " refused since the "
	    "start; %" PRIu64 " events dropped from full queues (those gone included)\n\n",
	    st->n_subscribers, st->subscribers_accepted, st->subscribers_refused, st->lost_queue);
	put(o, "%-5s %12s %14s %10s %14s %10s\n", "CPU", "PAGES", "EVENTS", "UNKNOWN",
	    "LOST(KERNEL)", "MALFORMED");
	for (size_t i = 0; i < st->n_cpus; i++) {
		const Ringtap__CpuCounters *c = st->cpus[i];

		put(o, "%-5" PRIu32 " %12" PRIu64 " %14" PRIu64 " %10" PRIu64 " %14" PRIu64
		    " %10" PRIu64 "\n", c->cpu, c->pages, c->events, c->unknown, c->kernel_lost,
		    c->malformed_pages);
		total[0] += c->pages;
		total[1] += c->events;
		total[2] += c->unknown;
		total[3] += c->kernel_lost;
		total[4] += c->malformed_pages;
	}
	put(o, "%-5s %12" PRIu64 " %14" PRIu64 " %10" PRIu64 " %14" PRIu64 " %10" PRIu64 "\n",
	    "all", total[0], total[1], total[2], total[3], total[4]);
	if (st->n_subscribers)
		put(o, "\n%-5s %-20s %6s %8s %-8s %12s %12s %12s %10s %10s\n", "ID", "CLIENT", "UID",
		    "PID", "ENCODING", "DELIVERED", "LOST(QUEUE)", "LOST(KERNEL)", "QUEUED",
		    "BYTES");
	for (size_t i = 0; i < st->n_subscribers; i++) {
		const Ringtap__SubscriberCounters *c = st->subscribers[i];

		put(o, "%-5" PRIu64 " %-20.20s %6" PRIu32 " %8" PRId32 " %-8s %12" PRIu64 " %12"
		    PRIu64 " %12" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n", c->id, c->client_name,
		    c->uid, c->pid, encoding_name(c->encoding), c->delivered, c->lost_queue,
		    c->lost_kernel, c->queued_records, c->queued_bytes);
	}
	if (st->nats)
		put(o, "\nNATS: %" PRIu64 " events published, %" PRIu64 " dropped (buffer full), %"
		    PRIu64 " failed; %" PRIu64 " messages acknowledged, %" PRIu64 " in the backlog\n",
		    st->nats->published, st->nats->dropped, st->nats->failed,
		    st->nats->acknowledged, st->nats->backlog);
}

int rt_metrics_format(const Ringtap__Status *st, enum rt_metrics_format format,
		      struct rt_buf *out)
{
	struct out o = { out, format, 0 };

	if (format == RT_METRICS_TABLE)
		table(&o, st);
	else
		exposition(&o, st);
	return o.err;
}

const char *rt_metrics_content_type(enum rt_metrics_format format)
{
	switch (format) {
	case RT_METRICS_OPENMETRICS:
		return "application/openmetrics-text; version=1.0.0; charset=utf-8";
	case RT_METRICS_PROMETHEUS:
		return "text/plain; version=0.0.4; charset=utf-8";
	default:
		return "text/plain; charset=utf-8";
	}
}

/* Whether [p, end) holds needle, ignoring case. */
static bool holds(const char *p, const char *end, const char *needle)
{
	size_t n = strlen(needle);

	for (; p + n <= end; p++)
		if (!strncasecmp(p, needle, n))
			return true;
	return false;
}

int rt_metrics_http_request(const char *req, size_t len, enum rt_metrics_format *format,
			    bool *head)
{
	const char *end = req + len, *line = req, *eol;
	static const char accept[] = "accept:";

	*format = RT_METRICS_PROMETHEUS;
	*head = false;
	eol = memchr(req, '\n', len);
	if (!eol || !memchr(req, ' ', (size_t)(eol - req)))
		return -EINVAL;
	if (len >= 4 && !memcmp(req, "GET ", 4))
		*head = false;
	else if (len >= 5 && !memcmp(req, "HEAD ", 5))
		*head = true;
	else
		return -EOPNOTSUPP;
	for (line = eol + 1; line < end; line = eol + 1) {
		eol = memchr(line, '\n', (size_t)(end - line));
		if (!eol)
			eol = end;
		if ((size_t)(eol - line) >= sizeof(accept) - 1 &&
		    !strncasecmp(line, accept, sizeof(accept) - 1) &&
		    holds(line, eol, "application/openmetrics-text"))
			*format = RT_METRICS_OPENMETRICS;
	}
	return 0;
}
