// SPDX-License-Identifier: LGPL-2.1-or-later
/* A restart state from untrusted bytes (the fd store's memfd): read, and what it read written back. */
#include <string.h>

#include "state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rt_state st;
	struct rt_why why;
	struct rt_buf b = { 0 };

	if (rt_state_read(data, size, &st, &why))
		return 0;
	/* What was read is written back the same way (a longer record loses only its extra). */
	if (!rt_state_write(&st, &b) && b.len > size)
		__builtin_trap();
	rt_buf_free(&b);
	rt_state_release(&st);
	return 0;
}
