/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * legacy: records rewritten into a fixed layout that an old tool expects,
 * whatever layout the running kernel uses: the daemon absorbs the ABI change
 * so a tool with hard-coded offsets keeps working.
 *
 * A legacy layout is a common header (named fields at fixed offsets) after
 * which the payload is laid out as the kernel lays out a struct: each field
 * at the next offset aligned to its natural alignment, dynamic data after
 * the fixed part. "padded-2012" is the 12-byte header of kernels before the
 * padding was removed (type, flags, preempt_count, pid, padding). Pure.
 */
#include <stddef.h>
#include <stdint.h>

#include "decode.h"

struct tep_event;

struct rt_legacy_field {
	const char *name;		/* common_ fields as the format names them */
	unsigned int offset, size;
	int is_signed;
};

struct rt_legacy_layout {
	const char *name;
	unsigned int header_size;
	const struct rt_legacy_field *common;
	unsigned int n_common;
};

/* NULL when no legacy layout has that name. */
const struct rt_legacy_layout *rt_legacy_find(const char *name);

/* The offset of each payload field (in format order) in the legacy record. */
int rt_legacy_offsets(const struct rt_legacy_layout *legacy, const struct tep_event *event,
		      unsigned int *offsets, unsigned int n, unsigned int *fixed_size);

/*
 * Rewrites one record. out must hold rec->size + legacy->header_size bytes
 * plus alignment slack (RT_LEGACY_SLACK); returns the legacy size or -errno.
 */
#define RT_LEGACY_SLACK 64
int rt_legacy_rewrite(const struct rt_legacy_layout *legacy, const struct rt_record *rec,
		      const struct rt_layout *layout, uint8_t *out, size_t out_size);

/*
 * The event's format text as a kernel with the legacy layout would publish
 * it: the fields spelled and the print fmt as in the kernel's own text
 * (format; NULL: as libtraceevent understood them), at the legacy offsets.
 */
int rt_legacy_format(const struct rt_legacy_layout *legacy, const struct tep_event *event,
		     const char *format, char **text);
