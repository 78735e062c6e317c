/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/* check: the few assertions the unit tests share. Each test's main returns check_exit(). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures;
static int check_passes;

#define CHECK(cond)                                                                   \
	do {                                                                          \
		if (cond) {                                                           \
			check_passes++;                                               \
		} else {                                                              \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
				#cond);                                               \
			check_failures++;                                             \
		}                                                                     \
	} while (0)

#define CHECK_EQ(got, want)                                                               \
	do {                                                                              \
		long long g_ = (long long)(got), w_ = (long long)(want);                  \
		if (g_ == w_) {                                                           \
			check_passes++;                                                   \
		} else {                                                                  \
			fprintf(stderr, "%s:%d: %s = %lld, want %lld\n", __FILE__, __LINE__, \
				#got, g_, w_);                                            \
			check_failures++;                                                 \
		}                                                                         \
	} while (0)

#define CHECK_STR(got, want)                                                               \
	do {                                                                               \
		const char *g_ = (got), *w_ = (want);                                      \
		if (g_ && w_ && !strcmp(g_, w_)) {                                         \
			check_passes++;                                                    \
		} else {                                                                   \
			fprintf(stderr, "%s:%d: %s = \"%s\", want \"%s\"\n", __FILE__, __LINE__, \
				#got, g_ ? g_ : "(null)", w_ ? w_ : "(null)");             \
			check_failures++;                                                  \
		}                                                                          \
	} while (0)

/* A test that checked nothing proves nothing: it fails too. */
static inline int check_exit(const char *name)
{
	printf("%s: %d checks passed, %d failed\n", name, check_passes, check_failures);
	if (!check_passes && !check_failures)
		fprintf(stderr, "%s: no check ran\n", name);
	return check_failures || !check_passes ? 1 : 0;
}

/* Reads a whole file; NULL and a message on failure. The caller frees. */
static inline char *read_whole_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (n + 4096 + 1 > cap) {
			char *nb = realloc(buf, cap = (cap ? cap * 2 : 8192));

			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		size_t r = fread(buf + n, 1, cap - n - 1, f);

		n += r;
		if (r == 0)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}
