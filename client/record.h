/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/* record: the CLI's "ringtap record": the daemon's raw stream into a capture file. */

int cmd_record(int argc, char **argv);
