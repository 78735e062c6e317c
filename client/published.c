// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "published.h"
#include "ringtap.h"

/* Bounds on what untrusted messages can make us keep. */
#define MAX_HOSTS 4096
#define MAX_SCHEMAS 65536
#define MAX_CPUS 8192

struct schema_slot {
	char *subject;
	Ringtap__Published *msg;	/* owns the Schema */
};

struct cpu_seq {
	uint64_t session;
	char boot_id[40];
	uint64_t offered;	/* of this run, as seq says */
};

struct rt_pub_host {
	char name[64];
	FILE *out;
	Ringtap__Published *welcome;	/* the last one: its layout formats records */
	struct schema_slot *schemas;
	size_t n_schemas;
	struct cpu_seq *cpus;
	size_t n_cpus;
	uint64_t records, lost_kernel, lost_queue, offered_before, no_schema;
};

int rt_collector_init(struct rt_collector *c, const char *outdir, unsigned int flags)
{
	memset(c, 0, sizeof(*c));
	c->flags = flags;
	if (outdir && !(c->outdir = strdup(outdir)))
		return -ENOMEM;
	return 0;
}

static void host_free(struct rt_pub_host *h)
{
	if (h->out)
		fclose(h->out);
	if (h->welcome)
		ringtap__published__free_unpacked(h->welcome, NULL);
	for (size_t i = 0; i < h->n_schemas; i++) {
		free(h->schemas[i].subject);
		ringtap__published__free_unpacked(h->schemas[i].msg, NULL);
	}
	free(h->schemas);
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
		h->out = fopen(path, "we");
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
static int count_seq(struct rt_pub_host *h, const Ringtap__Published *p, uint64_t offered)
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
		cs->session = p->session;
		snprintf(cs->boot_id, sizeof(cs->boot_id), "%s", p->boot_id);
	}
	if (offered > cs->offered)
		cs->offered = offered;
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

int rt_collector_take(struct rt_collector *c, const char *subject, const uint8_t *data,
		      size_t len)
{
	struct ringtap_event ev = { 0 };
	struct rt_pub_host *h;
	Ringtap__Published *p;
	struct schema_slot *s;
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
	if (!ret)
		ret = count_seq(h, p, p->seq + (p->msg_case == RINGTAP__PUBLISHED__MSG_RECORD));
	if (ret)
		goto out;
	ev.cpu = p->cpu;
	switch (p->msg_case) {
	case RINGTAP__PUBLISHED__MSG_WELCOME:
		if (h->welcome)
			ringtap__published__free_unpacked(h->welcome, NULL);
		h->welcome = p;
		return 0;
	case RINGTAP__PUBLISHED__MSG_SCHEMA:
		ret = keep_schema(h, subject, p);
		if (!ret)
			return 0;
		break;
	case RINGTAP__PUBLISHED__MSG_RECORD:
		s = find_schema(h, subject);
		ev.kind = RINGTAP_RECORD;
		ev.record = p->record;
		/* Without its Schema the line says "unknown event id", and it is counted. */
		if (s && s->msg->schema->event_id == p->record->event_id)
			ev.schema = s->msg->schema;
		else
			h->no_schema++;
		h->records++;
		c->records++;
		ret = put_line(c, h, h->welcome ? h->welcome->welcome->layout : NULL, &ev);
		break;
	case RINGTAP__PUBLISHED__MSG_LOST:
		ev.kind = RINGTAP_LOST;
		ev.lost = p->lost;
		if (p->lost->source == RINGTAP__LOSS_SOURCE__QUEUE)
			h->lost_queue += p->lost->count;
		else
			h->lost_kernel += p->lost->count;
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

	for (size_t i = 0; i < c->n_hosts; i++)
		if (c->hosts[i]->out && fflush(c->hosts[i]->out))
			ret = -errno;
	return ret;
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
		fputc('\n', f);
	}
	if (c->bad)
		fprintf(f, "ringtap collect: %" PRIu64 " messages were not ringtapd's\n", c->bad);
}
