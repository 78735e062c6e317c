// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "read_file.h"
#include "util.h"

int rt_read_file(const char *path, size_t max, char **out, size_t *out_len)
{
	_cleanup_free_ char *text = NULL;
	size_t cap = 0, len = 0;
	FILE *f = fopen(path, "re");
	int ret = 0;

	if (!f)
		return -errno;
	for (;;) {
		size_t r;

		if (len + 65536 + 1 > cap) {
			char *more = realloc(text, cap = cap ? cap * 2 : 1 << 20);

			if (!more) {
				ret = -ENOMEM;
				break;
			}
			text = more;
		}
		r = fread(text + len, 1, cap - len - 1, f);
		if (!r) {
			/* errno says what: a directory given for a file is EISDIR. */
			if (ferror(f))
				ret = errno ? -errno : -EIO;
			break;
		}
		len += r;
		if (max && len > max) {
			ret = -EFBIG;
			break;
		}
	}
	fclose(f);
	if (ret)
		return ret;
	text[len] = '\0';
	*out = text;
	*out_len = len;
	text = NULL;
	return 0;
}
