// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What systemd hands back at a start, sorted: the fd store's descriptors
 * taken by name (cpuN, connN, ring, state), the socket unit's own, which come
 * first, left in LISTEN_FDS for the listener, one of neither kind after the
 * store's closed; what nobody took is closed by the release, what was
 * taken stays open; no LISTEN_FDNAMES, nothing taken.
 */
#include <fcntl.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "check.h"
#include "fdstore.h"

static bool is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

/* n descriptors at 3.. (each a pipe's end), named as systemd would name them. */
static void hand_back(unsigned int n, const char *names)
{
	char num[24];
	int p[2];

	for (unsigned int i = 0; i < n; i++) {
		int high;

		/* Out of the way first: pipe() may hand out the very numbers wanted. */
		if (pipe(p) || (high = fcntl(p[0], F_DUPFD, 100)) < 0)
			exit(2);
		close(p[0]);
		close(p[1]);
		dup2(high, SD_LISTEN_FDS_START + (int)i);
		close(high);
	}
	snprintf(num, sizeof(num), "%d", (int)getpid());
	setenv("LISTEN_PID", num, 1);
	snprintf(num, sizeof(num), "%u", n);
	setenv("LISTEN_FDS", num, 1);
	setenv("LISTEN_FDNAMES", names, 1);
}

static void sorted(void)
{
	struct rt_fdstore fs;

	hand_back(8, "ringtapd.socket:cpu0:cpu1:conn4:state:ring:crash:nats");
	CHECK_EQ(rt_fdstore_collect(&fs), 0);
	CHECK(rt_fdstore_any(&fs));
	CHECK_EQ(fs.ncpu_fds, 2);
	CHECK_EQ(fs.state_fd, 7);
	CHECK_EQ(fs.ring_fd, 8);
	CHECK_EQ(fs.crash_fd, 9);
	CHECK_EQ(fs.nats_fd, 10);
	CHECK_EQ(fs.n_conns, 1);
	CHECK_EQ(fs.n_names, 7);
	/* The socket unit's, for sd_listen_fds() as if the store had given nothing. */
	CHECK_STR(getenv("LISTEN_FDS"), "1");
	CHECK_STR(getenv("LISTEN_FDNAMES"), "ringtapd.socket");
	CHECK_EQ(sd_listen_fds(0), 1);
	CHECK_EQ(rt_fdstore_take_cpu(&fs, 1), 5);
	CHECK_EQ(rt_fdstore_take_cpu(&fs, 1), -1);
	CHECK_EQ(rt_fdstore_take_cpu(&fs, 2), -1);
	CHECK_EQ(rt_fdstore_take_conn(&fs, 4), 6);
	CHECK_EQ(rt_fdstore_take_conn(&fs, 5), -1);
	CHECK_EQ(rt_fdstore_take_ring(&fs), 8);
	CHECK_EQ(rt_fdstore_take_ring(&fs), -1);
	CHECK_EQ(rt_fdstore_take_nats(&fs), 10);
	CHECK_EQ(rt_fdstore_take_nats(&fs), -1);
	rt_fdstore_release(&fs);
	CHECK(is_open(3));
	CHECK(!is_open(4));	/* cpu0: nobody took it */
	CHECK(is_open(5));
	CHECK(is_open(6));
	CHECK(!is_open(7));	/* the state */
	CHECK(is_open(8));	/* the ring, taken */
	CHECK(!is_open(9));	/* the crash state */
	CHECK(is_open(10));	/* the NATS mark, taken */
	CHECK(!rt_fdstore_any(&fs));
	for (int fd = 3; fd <= 10; fd++)
		close(fd);
}

static void stray_after_ours(void)
{
	struct rt_fdstore fs;

	hand_back(3, "cpu0:mystery:state");
	CHECK_EQ(rt_fdstore_collect(&fs), 0);
	CHECK_EQ(fs.ncpu_fds, 1);
	CHECK_EQ(fs.state_fd, 5);
	CHECK(!is_open(4));
	CHECK_EQ(sd_listen_fds(0), 0);
	rt_fdstore_release(&fs);
	CHECK(!is_open(3));
	CHECK(!is_open(5));
}

static void nothing_handed_back(void)
{
	struct rt_fdstore fs;

	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	CHECK_EQ(rt_fdstore_collect(&fs), 0);
	CHECK(!rt_fdstore_any(&fs));
	CHECK_EQ(fs.state_fd, -1);
	CHECK_EQ(fs.ring_fd, -1);
	CHECK_EQ(fs.crash_fd, -1);
	rt_fdstore_release(&fs);
}

int main(void)
{
	/* No systemd to tell: the release's FDSTOREREMOVE goes nowhere. */
	unsetenv("NOTIFY_SOCKET");
	sorted();
	stray_after_ours();
	nothing_handed_back();
	return check_exit("test-fdstore");
}
