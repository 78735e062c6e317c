// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ringtap collect's reading of NATS messages from untrusted bytes: the
 * input is a run of messages, each a subject choice byte, a 16-bit length
 * and a Published payload, so that Welcomes and Schemas meet the Records
 * they describe.
 */
#include "published.h"
#include "ringtap.h"

static const char *const subjects[] = {
	"ringtap.h1._hello", "ringtap.h1.sys.ev", "ringtap.h1._lost", "ringtap.h2.sys.ev",
	"ringtap.h1.other.ev", "ringtap..x", "nats.h1.x",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rt_collector c;

	if (rt_collector_init(&c, NULL, size && data[0] & 1 ? RINGTAP_FORMAT_JSON : 0))
		return 0;
	while (size >= 3) {
		const char *subject = subjects[data[0] % (sizeof(subjects) / sizeof(subjects[0]))];
		size_t len = (size_t)data[1] | (size_t)data[2] << 8;

		data += 3;
		size -= 3;
		if (len > size)
			len = size;
		rt_collector_take(&c, subject, data, len);
		data += len;
		size -= len;
	}
	rt_collector_release(&c);
	return 0;
}
