/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/* status: `ringtap status`, ringtapd's counters as a table, Prometheus or OpenMetrics text. */

/* The command after its name (argv[0] "status"); the exit status. */
int rt_status_main(int argc, char **argv);
