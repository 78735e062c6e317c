/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * handshake: the daemon's answer to a Hello, as a decision.
 *
 * Picks the protocol version (the highest both speak) and the encoding (the
 * client's first preference the daemon offers), or says why not, with the
 * machine-readable reason the Refusal carries; the transport (RING needs
 * version 2 and takes RAW pages only, picked whatever the client's order); a Subscription's own checks,
 * for the Hello's and an Update's alike. A Hello without events is
 * answered with a Welcome and nothing after it. Event names are checked
 * against the kernel elsewhere: they need tracefs. Pure.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ringtap.pb-c.h"
#include "why.h"

#define RT_PROTOCOL_MIN 1
#define RT_PROTOCOL_MAX 2
/* The first version with the RING transport. */
#define RT_PROTOCOL_RING 2

struct rt_offer {
	uint32_t min_version, max_version;
	const Ringtap__Encoding *encodings;	/* what this daemon can send */
	size_t n_encodings;
	size_t max_events;			/* globs per subscription */
};

struct rt_agreement {
	uint32_t version;
	Ringtap__Encoding encoding;
	bool ring;				/* the RING transport: the client maps the page ring */
};

/* 0 and the agreement, or -EPROTO with *reason and the Refusal's text in why. */
int rt_handshake(const Ringtap__Hello *hello, const struct rt_offer *offer,
		 struct rt_agreement *out, Ringtap__RefusalReason *reason, struct rt_why *why);

/*
 * The checks of a Subscription that need no kernel (its globs, how many),
 * the Hello's and an Update's alike: 0, or -EPROTO with the text in why
 * (a Hello's BAD_SUBSCRIPTION). max_events 0: any number.
 */
int rt_subscription_check(const Ringtap__Subscription *sub, size_t max_events, struct rt_why *why);
