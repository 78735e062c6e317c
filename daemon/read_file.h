/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/* read_file: the daemon's whole-file reads (settings, clients file, tracefs texts). */
#include <stddef.h>

/*
 * A whole file of unknown size (proc and tracefs files report 0), read into
 * a NUL-terminated buffer; -EFBIG past max bytes (0: no limit but memory).
 */
int rt_read_file(const char *path, size_t max, char **out, size_t *out_len);
