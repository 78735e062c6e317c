// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rt-guest-readbench: drains one trace_pipe_raw with read() or with splice()
 * through a pipe (what tracefs_cpu_buffered_read does) and prints the bytes
 * and the CPU time it took, to choose how ringtapd reads.
 *
 * usage: rt-guest-readbench FILE read|splice
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static long cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec * 1000000L + ru.ru_utime.tv_usec + ru.ru_stime.tv_sec * 1000000L +
	       ru.ru_stime.tv_usec;
}

int main(int argc, char **argv)
{
	static char buf[1 << 16];
	long long bytes = 0;
	long start;
	int fd, p[2], use_splice;

	if (argc != 3) {
		fprintf(stderr, "usage: %s FILE read|splice\n", argv[0]);
		return 2;
	}
	use_splice = !strcmp(argv[2], "splice");
	fd = open(argv[1], O_RDONLY | O_NONBLOCK);
	if (fd < 0 || pipe(p)) {
		perror(argv[1]);
		return 1;
	}
	start = cpu_us();
	for (;;) {
		ssize_t n;

		if (use_splice) {
			n = splice(fd, NULL, p[1], NULL, sizeof(buf), SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
			if (n > 0) {
				ssize_t got = 0;

				while (got < n) {
					ssize_t r = read(p[0], buf, sizeof(buf));

					if (r <= 0)
						break;
					got += r;
				}
				bytes += got;
				continue;
			}
			/* splice moves whole pages only: the last partial one needs read(). */
		}
		n = read(fd, buf, 4096);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		bytes += n;
	}
	printf("%s: %lld bytes in %ld us of CPU\n", argv[2], bytes, cpu_us() - start);
	return 0;
}
