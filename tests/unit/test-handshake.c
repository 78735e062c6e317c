// SPDX-License-Identifier: LGPL-2.1-or-later
/* handshake: every refusal path, and the choices made when there is none. */
#include <stdbool.h>

#include "check.h"
#include "handshake.h"

static const Ringtap__Encoding offered[] = { RINGTAP__ENCODING__DECODED };
static const struct rt_offer offer = { 1, 1, offered, 1, 4 };

static struct rt_why last;

static int shake(uint32_t lo, uint32_t hi, Ringtap__Encoding *enc, size_t n_enc, char **events,
		 size_t n_events, bool with_sub, struct rt_agreement *out,
		 Ringtap__RefusalReason *reason)
{
	Ringtap__Hello h = RINGTAP__HELLO__INIT;
	Ringtap__Subscription sub = RINGTAP__SUBSCRIPTION__INIT;
	struct rt_why why = { "" };
	int ret;

	h.min_version = lo;
	h.max_version = hi;
	h.encodings = enc;
	h.n_encodings = n_enc;
	sub.events = events;
	sub.n_events = n_events;
	h.subscription = with_sub ? &sub : NULL;
	*reason = RINGTAP__REFUSAL_REASON__REFUSAL_UNSPECIFIED;
	ret = rt_handshake(&h, &offer, out, reason, &why);
	if (ret)
		CHECK(why.text[0]);
	last = why;
	return ret;
}

/* A Hello asking for a transport, to a daemon of versions 1 and 2 that sends DECODED and RAW. */
static int shake_transport(uint32_t hi, Ringtap__Encoding *enc, size_t n_enc, bool has,
			   Ringtap__Transport transport, struct rt_agreement *out,
			   Ringtap__RefusalReason *reason)
{
	static const Ringtap__Encoding sends[] = { RINGTAP__ENCODING__DECODED,
						   RINGTAP__ENCODING__RAW };
	static const struct rt_offer offer2 = { 1, 2, sends, 2, 4 };
	Ringtap__Hello h = RINGTAP__HELLO__INIT;
	struct rt_why why = { "" };
	int ret;

	h.min_version = 1;
	h.max_version = hi;
	h.encodings = enc;
	h.n_encodings = n_enc;
	h.has_transport = has;
	h.transport = transport;
	ret = rt_handshake(&h, &offer2, out, reason, &why);
	last = why;
	return ret;
}

/*
 * RING needs version 2 and RAW (picked whatever the order asked); a version
 * 1 client is served as before, and SOCKET or no transport is the socket.
 */
static void test_transport(void)
{
	Ringtap__Encoding decoded_raw[] = { RINGTAP__ENCODING__DECODED, RINGTAP__ENCODING__RAW };
	Ringtap__Encoding decoded[] = { RINGTAP__ENCODING__DECODED };
	struct rt_agreement a;
	Ringtap__RefusalReason r;

	CHECK_EQ(shake_transport(2, decoded_raw, 2, true, RINGTAP__TRANSPORT__RING, &a, &r), 0);
	CHECK_EQ(a.version, 2);
	CHECK(a.ring);
	CHECK_EQ(a.encoding, RINGTAP__ENCODING__RAW);
	CHECK_EQ(shake_transport(1, decoded_raw, 2, true, RINGTAP__TRANSPORT__RING, &a, &r), -EPROTO);
	CHECK_EQ(r, RINGTAP__REFUSAL_REASON__NO_COMMON_VERSION);
	CHECK_STR(last.text, "the RING transport needs protocol version 2");
	CHECK_EQ(shake_transport(2, decoded, 1, true, RINGTAP__TRANSPORT__RING, &a, &r), -EPROTO);
	CHECK_EQ(r, RINGTAP__REFUSAL_REASON__NO_ACCEPTABLE_ENCODING);
	CHECK_STR(last.text, "the RING transport takes RAW pages only");
	/* Version 1 clients: what they had, version 1, the socket. */
	CHECK_EQ(shake_transport(1, decoded_raw, 2, false, 0, &a, &r), 0);
	CHECK(a.version == 1 && !a.ring && a.encoding == RINGTAP__ENCODING__DECODED);
	CHECK_EQ(shake_transport(2, decoded_raw, 2, true, RINGTAP__TRANSPORT__SOCKET, &a, &r), 0);
	CHECK(a.version == 2 && !a.ring && a.encoding == RINGTAP__ENCODING__DECODED);
}

int main(int argc, char **argv)
{
	Ringtap__Encoding decoded[] = { RINGTAP__ENCODING__DECODED };
	Ringtap__Encoding raw_first[] = { RINGTAP__ENCODING__RAW, RINGTAP__ENCODING__FIXED,
					  RINGTAP__ENCODING__DECODED };
	Ringtap__Encoding raw_only[] = { RINGTAP__ENCODING__RAW };
	char *one[] = { "ringtap_test:*" };
	char *five[] = { "a:*", "b:*", "c:*", "d:*", "e:*" };
	char *empty[] = { "" };
	Ringtap__Subscription sub = RINGTAP__SUBSCRIPTION__INIT;
	struct rt_why why = { "" };
	struct rt_agreement a;
	Ringtap__RefusalReason r;

	CHECK_EQ(shake(1, 1, decoded, 1, one, 1, true, &a, &r), 0);
	CHECK_EQ(a.version, 1);
	CHECK_EQ(a.encoding, RINGTAP__ENCODING__DECODED);
	/* A wide range settles on the highest common version. */
	CHECK_EQ(shake(0, 9, decoded, 1, one, 1, true, &a, &r), 0);
	CHECK_EQ(a.version, 1);
	/* The client's first preference that is offered wins. */
	CHECK_EQ(shake(1, 1, raw_first, 3, one, 1, true, &a, &r), 0);
	CHECK_EQ(a.encoding, RINGTAP__ENCODING__DECODED);

	CHECK_EQ(shake(2, 3, decoded, 1, one, 1, true, &a, &r), -EPROTO);
	CHECK_EQ(r, RINGTAP__REFUSAL_REASON__NO_COMMON_VERSION);
	CHECK_STR(last.text, "this daemon speaks protocol version 1 only");
	CHECK_EQ(shake(1, 0, decoded, 1, one, 1, true, &a, &r), -EPROTO);
	CHECK_EQ(r, RINGTAP__REFUSAL_REASON__NO_COMMON_VERSION);
	CHECK_EQ(shake(1, 1, raw_only, 1, one, 1, true, &a, &r), -EPROTO);
	CHECK_EQ(r, RINGTAP__REFUSAL_REASON__NO_ACCEPTABLE_ENCODING);
	/* The refusal names what this daemon does send, not a fixed list. */
	CHECK_STR(last.text, "none of the encodings asked for is offered (this daemon sends DECODED)");
	CHECK_EQ(shake(1, 1, NULL, 0, one, 1, true, &a, &r), -EPROTO);
	CHECK_EQ(r, RINGTAP__REFUSAL_REASON__NO_ACCEPTABLE_ENCODING);
	/* No events: a Welcome only, for clients that just want to know the host. */
	CHECK_EQ(shake(1, 1, decoded, 1, NULL, 0, false, &a, &r), 0);
	CHECK_EQ(shake(1, 1, decoded, 1, NULL, 0, true, &a, &r), 0);
	CHECK_EQ(shake(1, 1, decoded, 1, five, 5, true, &a, &r), -EPROTO);
	CHECK_EQ(r, RINGTAP__REFUSAL_REASON__BAD_SUBSCRIPTION);
	CHECK_STR(last.text, "the subscription names 5 events; this daemon allows 4 (max_events)");
	CHECK_EQ(shake(1, 1, decoded, 1, empty, 1, true, &a, &r), -EPROTO);
	CHECK_EQ(r, RINGTAP__REFUSAL_REASON__BAD_SUBSCRIPTION);
	CHECK_STR(last.text, "an empty event name");

	/* An Update's Subscription alone: the Hello's checks, the Hello's texts. */
	sub.n_events = 5;
	sub.events = five;
	CHECK_EQ(rt_subscription_check(&sub, 4, &why), -EPROTO);
	CHECK_STR(why.text, "the subscription names 5 events; this daemon allows 4 (max_events)");
	CHECK_EQ(rt_subscription_check(&sub, 0, &why), 0);
	sub.n_events = 1;
	sub.events = empty;
	CHECK_EQ(rt_subscription_check(&sub, 4, &why), -EPROTO);
	CHECK_STR(why.text, "an empty event name");
	test_transport();
	return check_exit("test-handshake");
}
