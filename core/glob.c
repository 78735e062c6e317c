// SPDX-License-Identifier: LGPL-2.1-or-later
#include <fnmatch.h>
#include <string.h>

#include "glob.h"

bool rt_glob_match(const char *glob, const char *system, const char *name)
{
	const char *colon = strchr(glob, ':');
	char sysglob[256];
	size_t len;

	if (!colon)
		return !fnmatch(glob, name, 0);
	len = (size_t)(colon - glob);
	/* No system is named that long: such a glob matches nothing. */
	if (len >= sizeof(sysglob))
		return false;
	memcpy(sysglob, glob, len);
	sysglob[len] = '\0';
	return !fnmatch(sysglob, system, 0) && !fnmatch(colon + 1, name, 0);
}
