/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where a tool of 2012 finds the test event's fields in a padded-2012
 * record, as it compiled them in. Taken from the padded kernel's own format,
 * tests/fixtures/padded/events/ringtap_test/ringtap_test/format, and kept
 * apart from core/legacy.c on purpose: the old tools that read ringtapd's
 * FIXED records (rt-guest-legacy-reader, rt-guest-load, test-legacy) check
 * legacy.c's rewrite against these, so a fault there shows as wrong values.
 */
#ifndef RINGTAP_PADDED_2012_H
#define RINGTAP_PADDED_2012_H

#define PADDED_2012_TYPE_AT	0	/* unsigned short common_type */
#define PADDED_2012_PID_AT	4	/* int common_pid */
#define PADDED_2012_SEQ_AT	16	/* u64 seq */
#define PADDED_2012_CPU_AT	24	/* unsigned int cpu */
#define PADDED_2012_TAG_AT	28	/* char tag[8] */
#define PADDED_2012_TAG_SIZE	8
#define PADDED_2012_MSG_AT	36	/* __data_loc char[] msg: the location word */
#define PADDED_2012_FIXED_SIZE	40	/* the fixed part, up to msg's word's end */

#endif
