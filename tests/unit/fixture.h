/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * fixture: loads a captured tracefs tree (tests/fixtures/<name>) the way the
 * daemon does, through tracefs_set_tracing_dir(), and decodes its pages.
 */
#include <event-parse.h>
#include <trace-seq.h>

#include "check.h"
#include "decode.h"
#include "layout.h"
#include "tracefs.h"

struct fixture {
	struct rt_session *session;
	struct rt_layout *layout;
	struct rt_decoder *decoder;
	int ncpus;			/* per_cpu/cpuN directories */
	char dir[4096];
};

static inline int fixture_open(struct fixture *fx, const char *root, const char *name,
			       const char *const *events)
{
	struct rt_session_opts opts = { 0 };
	struct rt_why why = { "" };
	int ret;

	memset(fx, 0, sizeof(*fx));
	snprintf(fx->dir, sizeof(fx->dir), "%s/%s", root, name);
	opts.tracing_dir = fx->dir;
	ret = rt_session_open(&fx->session, &opts, &why);
	if (!ret)
		ret = rt_session_layout(fx->session, &fx->layout, &why);
	if (!ret)
		ret = rt_session_enable_globs(fx->session, fx->layout, events, &why);
	if (ret > 0)
		ret = 0;
	if (!ret)
		ret = rt_decoder_new(&fx->decoder, fx->layout);
	if (!ret)
		fx->ncpus = rt_session_ncpus(fx->session);
	if (ret)
		fprintf(stderr, "fixture %s: %s: %s\n", name, why.text, strerror(-ret));
	return ret;
}

static inline void fixture_close(struct fixture *fx)
{
	rt_decoder_free(fx->decoder);
	rt_layout_free(fx->layout);
	rt_session_close(fx->session);
}

/* The raw pages of one CPU; the caller frees. */
static inline uint8_t *fixture_pages(struct fixture *fx, int cpu, size_t *len)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace_pipe_raw", fx->dir, cpu);
	return (uint8_t *)read_whole_file(path, len);
}
