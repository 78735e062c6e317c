// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdlib.h>

#include "util.h"

void rt_strv_free(char **strv)
{
	for (char **p = strv; p && *p; p++)
		free(*p);
	free(strv);
}
