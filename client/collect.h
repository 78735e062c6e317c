/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/* collect: the CLI's "ringtap collect": many daemons over TCP, a recorder and a file per host. */

int cmd_collect(int argc, char **argv);
