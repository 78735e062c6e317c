/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * fixture-tree: a captured tracefs tree (tests/fixtures/<name>) read as
 * plain files into core's layout, the way tracefs.c would learn it, with
 * no libtracefs and none of the daemon's I/O. Shared by the unit tests
 * (fixture.h) and the fuzzers (fuzz/fixture-layout.h).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "layout.h"
#include "select.h"

/* A file of the tree, NUL-terminated; NULL when it cannot be read. The caller frees. */
static inline char *tree_read(const char *dir, const char *file, size_t *len)
{
	char path[4200];
	size_t size = 0, cap = 1 << 16;
	char *buf = NULL, *more;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	for (;;) {
		more = realloc(buf, cap + 1);
		if (!more) {
			free(buf);
			fclose(f);
			return NULL;
		}
		buf = more;
		size += fread(buf + size, 1, cap - size, f);
		if (size < cap)
			break;
		cap *= 2;
	}
	fclose(f);
	buf[size] = '\0';
	if (len)
		*len = size;
	return buf;
}

/* The layout of events/header_page and events/header_event, no event yet. */
static inline int tree_layout(const char *dir, struct rt_layout **out)
{
	size_t hl = 0, el = 0;
	char *hp = tree_read(dir, "events/header_page", &hl);
	char *he = tree_read(dir, "events/header_event", &el);
	int ret = hp && he ? rt_layout_new(out, hp, hl, he, el, false) : -ENOENT;

	free(hp);
	free(he);
	return ret;
}

/* events/<system>/<name>/format into the layout. */
static inline int tree_add_event(struct rt_layout *l, const char *dir, const char *system,
				 const char *name)
{
	char file[600];
	size_t len = 0;
	char *fmt;
	int ret;

	snprintf(file, sizeof(file), "events/%s/%s/format", system, name);
	fmt = tree_read(dir, file, &len);
	if (!fmt)
		return -ENOENT;
	ret = rt_layout_add_event(l, system, fmt, len, NULL);
	free(fmt);
	return ret;
}

static inline bool tree_is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* Every event the tree offers: events/<system>/<name> directories with a format. */
static inline int tree_catalogue(const char *dir, struct rt_catalogue *cat)
{
	char path[4200];
	struct dirent *s, *e;
	DIR *events, *sys;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/events", dir);
	events = opendir(path);
	if (!events)
		return -ENOENT;
	while (!ret && (s = readdir(events))) {
		if (s->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/events/%s", dir, s->d_name) >= (int)sizeof(path))
			continue;
		sys = tree_is_dir(path) ? opendir(path) : NULL;
		while (!ret && sys && (e = readdir(sys))) {
			if (snprintf(path, sizeof(path), "%s/events/%s/%s/format", dir, s->d_name,
				     e->d_name) >= (int)sizeof(path))
				continue;
			if (e->d_name[0] != '.' && !access(path, R_OK))
				ret = rt_catalogue_add(cat, s->d_name, e->d_name);
		}
		if (sys)
			closedir(sys);
	}
	closedir(events);
	rt_catalogue_sort(cat);
	return ret;
}

/*
 * The layout tracefs.c builds for a tree and these globs (NULL-terminated):
 * the headers, ftrace:print (which fixes the common fields), then every
 * event the globs name. -errno with the step in why.
 */
static inline int tree_layout_globs(const char *dir, const char *const *globs,
				    struct rt_layout **out, struct rt_why *why)
{
	struct rt_catalogue cat = { 0 };
	struct rt_selection sel = { 0 };
	struct rt_layout *l = NULL;
	size_t n = 0;
	int ret = tree_layout(dir, &l);

	if (ret)
		return rt_why_set(why, ret, "reading events/header_page and events/header_event");
	ret = tree_add_event(l, dir, "ftrace", "print");
	if (ret)
		rt_why_set(why, ret, "reading events/ftrace/print/format");
	if (!ret && (ret = tree_catalogue(dir, &cat)))
		rt_why_set(why, ret, "listing the events");
	while (globs && globs[n])
		n++;
	if (!ret)
		ret = rt_select_events(&cat, globs, n, NULL, 0, &sel, why);
	for (size_t i = 0; !ret && i < sel.n; i++) {
		const struct rt_event_name *e = &cat.events[sel.events[i]];

		ret = tree_add_event(l, dir, e->system, e->name);
		if (ret)
			rt_why_set(why, ret, "the format of %s:%s", e->system, e->name);
	}
	rt_selection_release(&sel);
	rt_catalogue_release(&cat);
	if (ret) {
		rt_layout_free(l);
		return ret;
	}
	*out = l;
	return 0;
}

/*
 * fn(root, name) for every tree under root (a directory with
 * events/header_page), so that a test covers a new fixture without a word
 * of its own; how many there were, -1 when root cannot be listed.
 */
static inline int tree_each(const char *root, void (*fn)(const char *root, const char *name))
{
	char path[4200];
	struct dirent *e;
	DIR *dir = opendir(root);
	int n = 0;

	if (!dir)
		return -1;
	while ((e = readdir(dir))) {
		snprintf(path, sizeof(path), "%s/%s/events/header_page", root, e->d_name);
		if (e->d_name[0] == '.' || access(path, R_OK))
			continue;
		fn(root, e->d_name);
		n++;
	}
	closedir(dir);
	return n;
}

/* The CPUs the tree has: per_cpu/cpuN directories, from 0 on. */
static inline int tree_ncpus(const char *dir)
{
	char path[4200];
	int n = 0;

	for (;; n++) {
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d", dir, n);
		if (!tree_is_dir(path))
			return n;
	}
}

/* per_cpu/cpuN/stats: the counters the kernel kept when the tree was captured. */
static inline int tree_cpu_stats(const char *dir, int cpu, struct rt_cpu_stats *st)
{
	char file[64];
	char *text;

	memset(st, 0, sizeof(*st));
	snprintf(file, sizeof(file), "per_cpu/cpu%d/stats", cpu);
	text = tree_read(dir, file, NULL);
	if (!text)
		return -ENOENT;
	rt_cpu_stats_parse(text, st);
	free(text);
	return 0;
}
