/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * event-list: the comma lists of the command line (-e, -F): every list an
 * option is given adds to those before it, and the whole is split with no
 * fixed limit, the same in stream and record.
 */

/* What stream and record subscribe to without -e. */
#define CLI_DEFAULT_EVENTS "ringtap_test:*"

/* Adds list to *csv, the lists given so far (NULL: none yet). 0 or -ENOMEM. */
int cli_list_add(char **csv, const char *list);

/*
 * Splits csv in place into a NULL-terminated array of its non-empty items,
 * which point into it; the caller frees the array. NULL when out of memory.
 */
const char **cli_list_split(char *csv);
