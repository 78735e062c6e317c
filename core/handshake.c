// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

#include "handshake.h"

static bool offered(const struct rt_offer *o, Ringtap__Encoding e)
{
	for (size_t i = 0; i < o->n_encodings; i++)
		if (o->encodings[i] == e)
			return true;
	return false;
}

/* "DECODED, RAW and FIXED", as the enum names them. */
static const char *offered_names(const struct rt_offer *o, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < o->n_encodings && len < size; i++) {
		const ProtobufCEnumValue *v =
			protobuf_c_enum_descriptor_get_value(&ringtap__encoding__descriptor,
							     (int)o->encodings[i]);
		const char *sep = !i ? "" : i + 1 == o->n_encodings ? " and " : ", ";

		len += (size_t)snprintf(buf + len, size - len, "%s%s", sep, v ? v->name : "?");
	}
	return buf;
}

int rt_handshake(const Ringtap__Hello *h, const struct rt_offer *o, struct rt_agreement *out,
		 Ringtap__RefusalReason *reason, struct rt_why *why)
{
	uint32_t hi = h->max_version < o->max_version ? h->max_version : o->max_version;
	uint32_t lo = h->min_version > o->min_version ? h->min_version : o->min_version;
	const Ringtap__Subscription *sub = h->subscription;
	char names[64];

	if (h->min_version > h->max_version || lo > hi) {
		*reason = RINGTAP__REFUSAL_REASON__NO_COMMON_VERSION;
		if (o->min_version == o->max_version)
			return rt_why_set(why, -EPROTO, "this daemon speaks protocol version %u only",
					  o->max_version);
		return rt_why_set(why, -EPROTO, "this daemon speaks protocol versions %u to %u",
				  o->min_version, o->max_version);
	}
	out->version = hi;
	out->encoding = RINGTAP__ENCODING__ENCODING_UNSPECIFIED;
	out->ring = h->has_transport && h->transport == RINGTAP__TRANSPORT__RING;
	if (out->ring && hi < RT_PROTOCOL_RING) {
		*reason = RINGTAP__REFUSAL_REASON__NO_COMMON_VERSION;
		return rt_why_set(why, -EPROTO, "the RING transport needs protocol version %u",
				  RT_PROTOCOL_RING);
	}
	for (size_t i = 0; i < h->n_encodings; i++)
		if (offered(o, h->encodings[i]) &&
		    (!out->ring || h->encodings[i] == RINGTAP__ENCODING__RAW)) {
			out->encoding = h->encodings[i];
			break;
		}
	if (out->ring && out->encoding == RINGTAP__ENCODING__ENCODING_UNSPECIFIED) {
		*reason = RINGTAP__REFUSAL_REASON__NO_ACCEPTABLE_ENCODING;
		return rt_why_set(why, -EPROTO, "the RING transport takes RAW pages only");
	}
	if (out->encoding == RINGTAP__ENCODING__ENCODING_UNSPECIFIED) {
		*reason = RINGTAP__REFUSAL_REASON__NO_ACCEPTABLE_ENCODING;
		return rt_why_set(why, -EPROTO, "none of the encodings asked for is offered (this "
				  "daemon sends %s)", offered_names(o, names, sizeof(names)));
	}
	/* No subscription is fine: the client wants the Welcome only (ringtap info). */
	if (!sub)
		return 0;
	*reason = RINGTAP__REFUSAL_REASON__BAD_SUBSCRIPTION;
	return rt_subscription_check(sub, o->max_events, why);
}

int rt_subscription_check(const Ringtap__Subscription *sub, size_t max_events, struct rt_why *why)
{
	if (max_events && sub->n_events > max_events)
		return rt_why_set(why, -EPROTO, "the subscription names %zu events; this daemon "
				  "allows %zu (max_events)", sub->n_events, max_events);
	for (size_t i = 0; i < sub->n_events; i++)
		if (!sub->events[i] || !sub->events[i][0])
			return rt_why_set(why, -EPROTO, "an empty event name");
	return 0;
}
