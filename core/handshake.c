// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdbool.h>

#include "handshake.h"

static bool offered(const struct rt_offer *o, Ringtap__Encoding e)
{
	for (size_t i = 0; i < o->n_encodings; i++)
		if (o->encodings[i] == e)
			return true;
	return false;
}

int rt_handshake(const Ringtap__Hello *h, const struct rt_offer *o, struct rt_agreement *out,
		 Ringtap__RefusalReason *reason, const char **text)
{
	uint32_t hi = h->max_version < o->max_version ? h->max_version : o->max_version;
	uint32_t lo = h->min_version > o->min_version ? h->min_version : o->min_version;
	const Ringtap__Subscription *sub = h->subscription;

	if (h->min_version > h->max_version || lo > hi) {
		*reason = RINGTAP__REFUSAL_REASON__NO_COMMON_VERSION;
		*text = "this daemon speaks protocol version 1 only";
		return -EPROTO;
	}
	out->version = hi;
	out->encoding = RINGTAP__ENCODING__ENCODING_UNSPECIFIED;
	for (size_t i = 0; i < h->n_encodings; i++)
		if (offered(o, h->encodings[i])) {
			out->encoding = h->encodings[i];
			break;
		}
	if (out->encoding == RINGTAP__ENCODING__ENCODING_UNSPECIFIED) {
		*reason = RINGTAP__REFUSAL_REASON__NO_ACCEPTABLE_ENCODING;
		*text = "none of the encodings asked for is offered (this daemon sends DECODED)";
		return -EPROTO;
	}
	/* No subscription is fine: the client wants the Welcome only (ringtap info). */
	if (!sub)
		return 0;
	if (o->max_events && sub->n_events > o->max_events) {
		*reason = RINGTAP__REFUSAL_REASON__BAD_SUBSCRIPTION;
		*text = "the subscription names more events than this daemon allows";
		return -EPROTO;
	}
	for (size_t i = 0; i < sub->n_events; i++)
		if (!sub->events[i] || !sub->events[i][0]) {
			*reason = RINGTAP__REFUSAL_REASON__BAD_SUBSCRIPTION;
			*text = "an empty event name";
			return -EPROTO;
		}
	return 0;
}
