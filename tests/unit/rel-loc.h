/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * rel-loc: an event with a __rel_loc string (counted from the end of its
 * word), which no captured fixture has, for the tests of every module that
 * reads one (decode, encode, filter). Its common fields are the stock
 * layout's; a record of it is built in bytes of the host's order.
 */
#include <stdint.h>
#include <string.h>

#define REL_LOC_WORD 12	/* the name's __rel_loc word */

static const char rel_loc_format[] =
	"name: rel_test\nID: 4000\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:u32 nr;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:__rel_loc char[] name;\toffset:12;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"nr=%u name=%s\", REC->nr, __get_rel_str(name)\n";

/*
 * A rel_test record in data: nr, and text (with its NUL) skip bytes after
 * the end of the name's word. Returns the record's size.
 */
static inline unsigned int rel_loc_record(uint8_t *data, uint32_t nr, const char *text,
					  unsigned int skip)
{
	uint16_t id = 4000;
	uint32_t len = (uint32_t)strlen(text) + 1, word = len << 16 | skip;

	memset(data, 0, REL_LOC_WORD + 4 + skip + len);
	memcpy(data, &id, 2);
	memcpy(data + 8, &nr, 4);
	memcpy(data + REL_LOC_WORD, &word, 4);
	memcpy(data + REL_LOC_WORD + 4 + skip, text, len);
	return REL_LOC_WORD + 4 + skip + len;
}
