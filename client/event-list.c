// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "event-list.h"

int cli_list_add(char **csv, const char *list)
{
	size_t had = *csv ? strlen(*csv) : 0, n = strlen(list);
	char *grown = realloc(*csv, had + 1 + n + 1);

	if (!grown)
		return -ENOMEM;
	if (had)
		grown[had++] = ',';
	memcpy(grown + had, list, n + 1);
	*csv = grown;
	return 0;
}

const char **cli_list_split(char *csv)
{
	/* No more items than one per two bytes ("a,b,c"), and the NULL. */
	const char **list = calloc(strlen(csv) / 2 + 2, sizeof(*list));
	char *save = NULL;
	size_t n = 0;

	if (!list)
		return NULL;
	for (char *tok = strtok_r(csv, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		list[n++] = tok;
	return list;
}
