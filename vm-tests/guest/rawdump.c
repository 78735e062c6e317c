// SPDX-License-Identifier: GPL-2.0
/*
 * rt-guest-rawdump: copies a trace_pipe_raw file to a file, reading without
 * blocking until the buffer is drained. Used only to capture test fixtures in
 * guests; independent of the daemon so the fixtures do not test themselves.
 *
 * usage: rt-guest-rawdump SRC DST
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[65536];
	long total = 0;
	int in, out;

	if (argc != 3) {
		fprintf(stderr, "usage: %s SRC DST\n", argv[0]);
		return 2;
	}
	in = open(argv[1], O_RDONLY | O_NONBLOCK);
	out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (in < 0 || out < 0) {
		perror("open");
		return 1;
	}
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		/* A blocking read of trace_pipe_raw never returns 0 in 6.1: EAGAIN is the end. */
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0) {
			perror("read");
			return 1;
		}
		if (n == 0)
			break;
		if (write(out, buf, n) != n) {
			perror("write");
			return 1;
		}
		total += n;
	}
	printf("%s: %ld bytes\n", argv[1], total);
	return close(out) ? 1 : 0;
}
