// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A resume token from untrusted bytes (Hello.resume.token): checked against
 * a fixed secret and peer. Only the one token made for that peer passes;
 * every other input is refused with one of the four reasons.
 */
#include <errno.h>
#include <string.h>

#include "token.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct rt_token_secret secret = { .id = "fuzzsec", .key = "a fixed key" };
	uint8_t good[RT_TOKEN_SIZE];
	struct rt_why why;
	int ret;

	if (rt_token_make(&secret, "uid:1000", good))
		__builtin_trap();
	ret = rt_token_check(&secret, "uid:1000", data, size, &why);
	if ((ret == 0) != (size == sizeof(good) && !memcmp(data, good, size)))
		__builtin_trap();
	if (ret && ret != -EINVAL && ret != -ESTALE && ret != -EPERM && ret != -EACCES)
		__builtin_trap();
	return 0;
}
