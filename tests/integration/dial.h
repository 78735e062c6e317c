/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * dial: the test clients' blocking connect to ringtapd's Unix socket. A
 * client that cannot even connect has nothing to test: it says why and
 * exits 2 (a set-up failure, not a finding).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>

static inline int dial(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror(path);
		exit(2);
	}
	return fd;
}
