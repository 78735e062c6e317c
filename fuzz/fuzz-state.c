// SPDX-License-Identifier: LGPL-2.1-or-later
/* A restart state from untrusted bytes (the fd store's memfd): read, and what it read written back. */
#include <string.h>

#include "state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rt_state st, again;
	struct rt_why why;
	struct rt_buf b = { 0 }, b2 = { 0 };

	if (rt_state_read(data, size, &st, &why))
		return 0;
	/*
	 * What was read, written back in this release's form (an earlier
	 * release's state gains its fields, a later one's loses its extra),
	 * reads back and writes the same bytes again.
	 */
	if (!rt_state_write(&st, &b)) {
		if (rt_state_read(b.data, b.len, &again, &why))
			__builtin_trap();
		if (rt_state_write(&again, &b2) || b2.len != b.len || memcmp(b.data, b2.data, b.len))
			__builtin_trap();
		rt_state_release(&again);
	}
	rt_buf_free(&b);
	rt_buf_free(&b2);
	rt_state_release(&st);
	return 0;
}
