// SPDX-License-Identifier: LGPL-2.1-or-later
/* A Hello from untrusted bytes through the daemon's negotiation. */
#include "handshake.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const Ringtap__Encoding offered[] = { RINGTAP__ENCODING__DECODED,
						     RINGTAP__ENCODING__RAW,
						     RINGTAP__ENCODING__FIXED };
	struct rt_offer offer = { RT_PROTOCOL_MIN, RT_PROTOCOL_MAX, offered, 3, 256 };
	Ringtap__Hello *h = ringtap__hello__unpack(NULL, size, data);
	struct rt_agreement a;
	Ringtap__RefusalReason reason;
	struct rt_why why;

	if (!h)
		return 0;
	rt_handshake(h, &offer, &a, &reason, &why);
	ringtap__hello__free_unpacked(h, NULL);
	return 0;
}
