/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * fixture: loads a captured tracefs tree (tests/fixtures/<name>) as plain
 * files into the layout tracefs.c would build for it (fixture-tree.h: no
 * libtracefs, none of the daemon's I/O), and decodes its pages.
 */
#include <event-parse.h>
#include <trace-seq.h>

#include "check.h"
#include "decode.h"
#include "fixture-tree.h"
#include "layout.h"

struct fixture {
	struct rt_layout *layout;
	struct rt_decoder *decoder;
	int ncpus;			/* per_cpu/cpuN directories */
	char dir[4096];
};

static inline int fixture_open(struct fixture *fx, const char *root, const char *name,
			       const char *const *events)
{
	struct rt_why why = { "" };
	int ret;

	memset(fx, 0, sizeof(*fx));
	snprintf(fx->dir, sizeof(fx->dir), "%s/%s", root, name);
	fx->ncpus = tree_ncpus(fx->dir);
	ret = fx->ncpus ? 0 : rt_why_set(&why, -ENOENT, "finding per_cpu directories");
	if (!ret)
		ret = tree_layout_globs(fx->dir, events, &fx->layout, &why);
	if (!ret)
		ret = rt_decoder_new(&fx->decoder, fx->layout);
	if (ret)
		fprintf(stderr, "fixture %s: %s: %s\n", name, why.text, strerror(-ret));
	return ret;
}

static inline void fixture_close(struct fixture *fx)
{
	rt_decoder_free(fx->decoder);
	rt_layout_free(fx->layout);
}

/* The kernel's counters for one CPU when the tree was captured. */
static inline int fixture_cpu_stats(struct fixture *fx, int cpu, struct rt_cpu_stats *st)
{
	return tree_cpu_stats(fx->dir, cpu, st);
}

/* The raw pages of one CPU; the caller frees. */
static inline uint8_t *fixture_pages(struct fixture *fx, int cpu, size_t *len)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace_pipe_raw", fx->dir, cpu);
	return (uint8_t *)read_whole_file(path, len);
}
