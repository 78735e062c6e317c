/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * pointer-event: an event with a pointer field, as hrtimer_expire_entry's
 * function (no fixture tree has one), on the stock tree's common fields:
 * ringtapd names the kernel function such a field points into.
 */
static const char pointer_format[] =
	"name: ptr_test\nID: 4001\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:void * function;\toffset:8;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"function=%ps\", REC->function\n";
