// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * status: the daemon's counters in one Status message, for a client that
 * asks over the socket (`ringtap status`, the Prometheus exporter): each
 * module's own, read where they are kept (the pump's per CPU, the server's
 * per subscriber, NATS's), none kept twice.
 */
#include <errno.h>
#include <stdlib.h>

#include "nats.h"
#include "pump.h"
#include "ringtapd.h"
#include "util.h"

void ringtapd_status_init(struct ringtapd *d)
{
	d->started_ns = rt_monotonic_ns();
	d->server_opts.status = ringtapd_status;
}

int ringtapd_status(void *userdata, struct rt_buf *frame)
{
	struct ringtapd *d = userdata;
	Ringtap__Status st = RINGTAP__STATUS__INIT;
	Ringtap__NatsCounters nats = RINGTAP__NATS_COUNTERS__INIT;
	size_t ncpus = (size_t)rt_pump_ncpus(d->pump);
	/* The pointers, then what they point to, in one block. */
	Ringtap__CpuCounters **cpus = calloc(ncpus + 1, sizeof(*cpus) + sizeof(**cpus));
	Ringtap__CpuCounters *cc;
	int ret;

	if (!cpus)
		return -ENOMEM;
	cc = (Ringtap__CpuCounters *)(cpus + ncpus + 1);
	st.uptime_ns = rt_monotonic_ns() - d->started_ns;
	for (size_t i = 0; i < ncpus; i++) {
		struct rt_pump_totals t;

		rt_pump_cpu_totals(d->pump, (int)i, &t);
		ringtap__cpu_counters__init(&cc[i]);
		cc[i].cpu = (uint32_t)i;
		cc[i].pages = t.pages;
		cc[i].events = t.records;
		cc[i].unknown = t.unknown;
		cc[i].kernel_lost = t.kernel_lost;
		cc[i].malformed_pages = t.malformed_pages;
		cpus[i] = &cc[i];
	}
	st.cpus = cpus;
	st.n_cpus = ncpus;
	if (d->nats) {
		struct rt_nats_stats ns;

		rt_nats_get_stats(d->nats, &ns);
		nats.published = ns.records - ns.failed;
		nats.dropped = ns.dropped;
		nats.failed = ns.failed;
		nats.acknowledged = ns.acked;
		nats.backlog = ns.pending;
		st.nats = &nats;
	}
	ret = rt_server_status(d->server, &st);
	ret = ret ?: rt_encode_status_frame(&st, frame);
	rt_server_status_release(&st);
	free(cpus);
	return ret;
}
