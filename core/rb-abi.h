/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * rb-abi: the commit word's flag bits and the event header's type_len
 * values, the ring buffer's ABI (kernel/trace/ring_buffer.c), which kbuffer
 * also decodes. layout.c checks that header_event announces these values
 * and that kbuffer finds the page header where header_page says it is;
 * decode.c reads pages with them, page-build.c writes pages with them.
 */
#define COMMIT_MISSED_EVENTS	(1ULL << 31)
#define COMMIT_MISSED_STORED	(1ULL << 30)
#define COMMIT_SIZE_BITS	27
#define TYPE_LEN_BITS		5
#define TYPE_DATA_MAX		28	/* "data max type_len": longer payloads say their length */
#define TYPE_PADDING		29
#define TYPE_TIME_EXTEND	30
#define TYPE_TIME_STAMP		31
