// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * storm-clients: a connection storm from one uid while another only wants
 * its few subscriptions served.
 *
 * A child becomes uid/gid 65534 and first takes its share: SHARE + 10 good
 * Hellos one after the other, of which exactly SHARE are served and the 10
 * others refused TOO_MANY_CLIENTS for max_clients_per_peer (the daemon is
 * started with --max-clients-per-peer=SHARE, and MAX_CLIENTS leaves room for
 * more: only the share stops them). Holding those, it opens 300 connections
 * at once: random bytes, half a Hello and then silence, Hellos written a
 * byte at a time, good Hellos, and good Hellos that vanish as soon as they
 * are served. Meanwhile uid 65533 (in the same group) opens 10 good
 * subscriptions. Asserted:
 *   - the share is reached, exactly, and none of the 300 is served;
 *   - every one of uid 65533's 10 is served (Welcome);
 *   - every connection of the storm got a reason before its close: a
 *     Welcome, a Refusal or an Error; none was closed unanswered or left
 *     waiting;
 *   - the daemon's open descriptors come back to their idle count and its
 *     RSS to its idle size (within a page cache's worth of slack).
 *
 * usage: storm-clients SOCKET DAEMON_PID SHARE
 * (as root; the daemon must let group 65534 subscribe)
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dial.h"
#include "wire.h"

enum kind { GARBAGE, HALF, DRIBBLE, GOOD, VANISH, N_KINDS };
static const char *const kind_name[N_KINDS] = {
	"random bytes", "half a Hello", "Hello a byte at a time", "good Hello",
	"served, then gone",
};
/* Ten connections of the storm, in the order they are opened, again and again. */
static const enum kind mix[10] = {
	GARBAGE, HALF, GOOD, GOOD, VANISH, GARBAGE, HALF, GOOD, DRIBBLE, GOOD,
};

#define STORM 300
#define KEPT 10
#define STORM_UID 65534
#define KEPT_UID 65533
/* The storm's share of subscriptions (--max-clients-per-peer), from the command line. */
static unsigned int share;

/* The longest a silent peer waits for its Error (ETIMEDOUT after 10 to 15 s), and some. */
#define DEADLINE_MS 25000

struct peer {
	int fd;
	enum kind kind;
	uint8_t *hello;
	size_t hello_len, sent;
	struct rt_wire_reader reader;
	Ringtap__Frame__MsgCase first;	/* the first frame heard; NOT_SET: none yet */
	Ringtap__RefusalReason reason;
	uint32_t error;
	char text[160];
	bool closed;
};

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void make_hello(struct peer *p, const char *name)
{
	Ringtap__Frame f = RINGTAP__FRAME__INIT;
	Ringtap__Hello h = RINGTAP__HELLO__INIT;
	Ringtap__Subscription sub = RINGTAP__SUBSCRIPTION__INIT;
	Ringtap__Encoding enc = RINGTAP__ENCODING__DECODED;
	char *events[1] = { "ringtap_test:*" };

	h.min_version = 1;
	h.max_version = 1;
	h.n_encodings = 1;
	h.encodings = &enc;
	h.client_name = (char *)name;
	sub.n_events = 1;
	sub.events = events;
	h.subscription = &sub;
	f.msg_case = RINGTAP__FRAME__MSG_HELLO;
	f.hello = &h;
	if (rt_wire_encode(&f, &p->hello, &p->hello_len))
		exit(2);
}

static void start(struct peer *p, const char *path, enum kind kind, unsigned int *seed)
{
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	/* Blocking: a full backlog makes the storm wait, as a real one would. */
	p->fd = dial(path);
	fcntl(p->fd, F_SETFL, O_NONBLOCK);
	rt_wire_reader_init(&p->reader, 0);
	switch (kind) {
	case GARBAGE:
		p->hello_len = 64;
		p->hello = malloc(p->hello_len);
		for (size_t i = 0; i < p->hello_len; i++)
			p->hello[i] = (uint8_t)rand_r(seed);
		break;
	case HALF:
		make_hello(p, "storm");
		p->hello_len /= 2;
		break;
	default:
		make_hello(p, kind == VANISH ? "storm-vanish" : "storm");
		break;
	}
	/* A dribbling peer sends its first byte now, the rest as it goes. */
	p->sent = kind == DRIBBLE ? 1 : p->hello_len;
	/* EPIPE when it was turned away already: its Refusal is still there to read. */
	(void)!write(p->fd, p->hello, p->sent);
}

/* Reads what came; true once the peer has its answer (and, unless served, its close). */
static bool hear(struct peer *p)
{
	uint8_t buf[8192];
	ssize_t n = -1;

	while (!p->closed && (n = read(p->fd, buf, sizeof(buf))) != 0) {
		size_t off = 0, used;
		Ringtap__Frame *f;

		if (n < 0) {
			if (errno == EAGAIN)
				break;
			p->closed = true;	/* ECONNRESET: the end, as a read of 0 */
			break;
		}
		while (off < (size_t)n && rt_wire_reader_feed(&p->reader, buf + off, (size_t)n - off,
							       &used) >= 0) {
			off += used;
			while (rt_wire_reader_next(&p->reader, &f) == 1) {
				if (p->first == RINGTAP__FRAME__MSG__NOT_SET) {
					p->first = f->msg_case;
					if (f->msg_case == RINGTAP__FRAME__MSG_REFUSAL) {
						p->reason = f->refusal->reason;
						snprintf(p->text, sizeof(p->text), "%s",
							 f->refusal->text ?: "");
					} else if (f->msg_case == RINGTAP__FRAME__MSG_ERROR) {
						p->error = f->error->code;
						snprintf(p->text, sizeof(p->text), "%s",
							 f->error->text ?: "");
					}
				}
				ringtap__frame__free_unpacked(f, NULL);
			}
			if (!used)
				break;
		}
	}
	if (n == 0)
		p->closed = true;
	if (p->first == RINGTAP__FRAME__MSG_WELCOME && p->kind == VANISH && !p->closed) {
		close(p->fd);
		p->fd = -1;
		p->closed = true;
	}
	if (p->first == RINGTAP__FRAME__MSG_WELCOME)
		return true;
	return p->closed;
}

/* Runs the peers until each has its answer or the deadline; the number still waiting. */
static unsigned int run(struct peer *peers, unsigned int n, long deadline)
{
	struct pollfd *pfd = calloc(n, sizeof(*pfd));
	unsigned int waiting = n;

	if (!pfd)
		exit(2);
	while (waiting && now_ms() < deadline) {
		waiting = 0;
		for (unsigned int i = 0; i < n; i++) {
			struct peer *p = &peers[i];
			bool done = hear(p);

			pfd[i].fd = done || p->fd < 0 ? -1 : p->fd;
			pfd[i].events = POLLIN;
			waiting += !done;
			if (!done && p->sent < p->hello_len && write(p->fd, p->hello + p->sent, 1) == 1)
				p->sent++;
		}
		if (waiting)
			poll(pfd, n, 10);
	}
	free(pfd);
	return waiting;
}

/* A connection that had no word, or waits still, fails the test; each is said. */
static unsigned int report(const char *who, struct peer *peers, unsigned int n)
{
	unsigned int got[N_KINDS][4] = { { 0 } }, bad = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct peer *p = &peers[i];
		int col = p->first == RINGTAP__FRAME__MSG_WELCOME ? 0 :
			  p->first == RINGTAP__FRAME__MSG_REFUSAL ? 1 :
			  p->first == RINGTAP__FRAME__MSG_ERROR ? 2 : 3;

		got[p->kind][col]++;
		if (col == 3 || (col != 0 && !p->closed)) {
			if (bad++ < 5)
				fprintf(stderr, "%s: %s #%u: %s\n", who, kind_name[p->kind], i,
					col == 3 ? (p->closed ? "closed unanswered" : "no answer")
						 : "answered but never closed");
		}
	}
	for (int k = 0; k < N_KINDS; k++)
		if (got[k][0] + got[k][1] + got[k][2] + got[k][3])
			printf("%s: %-22s welcomed %3u, refused %3u, told an Error %3u, "
			       "no answer %u\n", who, kind_name[k], got[k][0], got[k][1], got[k][2],
			       got[k][3]);
	return bad;
}

/*
 * The storm's own share, taken one Hello at a time so that its count is
 * exact: SHARE served, the 10 past it refused for max_clients_per_peer.
 * The served ones stay open in held[].
 */
static unsigned int take_share(const char *path, struct peer *held, unsigned int n)
{
	unsigned int seed = 3, served = 0, refused = 0, bad;

	for (unsigned int i = 0; i < n; i++) {
		start(&held[i], path, GOOD, &seed);
		run(&held[i], 1, now_ms() + 10000);
		served += held[i].first == RINGTAP__FRAME__MSG_WELCOME && !held[i].closed;
		refused += held[i].first == RINGTAP__FRAME__MSG_REFUSAL &&
			   held[i].reason == RINGTAP__REFUSAL_REASON__TOO_MANY_CLIENTS &&
			   strstr(held[i].text, "uid 65534") &&
			   strstr(held[i].text, "max_clients_per_peer");
	}
	printf("storm's share: %u of %u served, %u refused for max_clients_per_peer (want %u, %u)\n",
	       served, n, refused, share, n - share);
	bad = report("share (uid 65534)", held, n);
	if (served != share || refused != n - share) {
		fprintf(stderr, "share: %u served and %u refused for its share, want %u and %u\n",
			served, refused, share, n - share);
		bad++;
	}
	return bad;
}

static unsigned int storm(const char *path, int ready_fd)
{
	static struct peer peers[STORM], held[STORM];
	unsigned int seed = 1, bad, welcomed = 0, left, n_held = share + 10;

	if (n_held > STORM)
		exit(2);
	bad = take_share(path, held, n_held);
	for (unsigned int i = 0; i < STORM; i++)
		start(&peers[i], path, mix[i % 10], &seed);
	if (write(ready_fd, "!", 1) != 1)
		exit(2);
	left = run(peers, STORM, now_ms() + DEADLINE_MS);
	bad += report("storm (uid 65534)", peers, STORM);
	for (unsigned int i = 0; i < STORM; i++) {
		welcomed += peers[i].first == RINGTAP__FRAME__MSG_WELCOME;
		if (peers[i].fd >= 0)
			close(peers[i].fd);
		rt_wire_reader_release(&peers[i].reader);
		free(peers[i].hello);
	}
	for (unsigned int i = 0; i < n_held; i++) {
		close(held[i].fd);
		rt_wire_reader_release(&held[i].reader);
		free(held[i].hello);
	}
	printf("storm: %u of %u served past its full share, %u left waiting\n", welcomed, STORM,
	       left);
	if (welcomed) {
		fprintf(stderr, "storm: %u connections served past uid 65534's share\n", welcomed);
		bad++;
	}
	return bad;
}

static long proc_rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static int proc_fds(pid_t pid)
{
	char path[64];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Subscribers that must be served (all of them), storm or not. */
static unsigned int kept(const char *path, struct peer *peers)
{
	unsigned int seed = 2, served = 0;

	for (unsigned int i = 0; i < KEPT; i++)
		start(&peers[i], path, GOOD, &seed);
	run(peers, KEPT, now_ms() + 10000);
	for (unsigned int i = 0; i < KEPT; i++)
		served += peers[i].first == RINGTAP__FRAME__MSG_WELCOME && !peers[i].closed;
	printf("uid %u: %u of %u subscribers served\n", (unsigned int)getuid(), served, KEPT);
	return report(getuid() ? "the other uid" : "warm-up (root)", peers, KEPT) + (served != KEPT);
}

/* Warm-up: the first connections' allocations are the daemon's idle size, not growth. */
static void warm_up(const char *path)
{
	struct peer peers[KEPT];

	(void)kept(path, peers);
	for (unsigned int i = 0; i < KEPT; i++) {
		close(peers[i].fd);
		rt_wire_reader_release(&peers[i].reader);
		free(peers[i].hello);
	}
}

/* Waits for the daemon to close what the clients left; its count of descriptors then. */
static int settle(pid_t daemon, int idle_fds)
{
	int fds = proc_fds(daemon);

	for (int i = 0; i < 200 && fds != idle_fds; i++) {
		usleep(100000);
		fds = proc_fds(daemon);
	}
	return fds;
}

/* A child as uid, in the daemon's group; what fn returned is its exit status. */
static pid_t as_uid(uid_t uid, unsigned int (*fn)(const char *, int, int), const char *path,
		    int in, int out)
{
	pid_t pid;

	/* Or the children print the parent's buffered lines again. */
	fflush(NULL);
	pid = fork();
	if (pid)
		return pid;
	/* Only its own pipe ends: an inherited write end would keep a reader from its EOF. */
	for (int fd = 3; fd < 1024; fd++)
		if (fd != in && fd != out)
			close(fd);
	if (setgroups(0, NULL) || setgid(STORM_UID) || setuid(uid)) {
		perror("setuid");
		_exit(2);
	}
	pid = fn(path, in, out) ? 1 : 0;
	fflush(NULL);
	_exit(pid);
}

/*
 * The other uid: once the storm is open, every slot it could take is asked
 * for; its subscribers are held until the storm is over.
 */
static unsigned int kept_during(const char *path, int ready_fd, int hold_fd)
{
	struct peer peers[KEPT];
	unsigned int bad;
	char c;

	if (read(ready_fd, &c, 1) != 1) {
		fprintf(stderr, "the storm did not start\n");
		return 1;
	}
	bad = kept(path, peers);
	(void)!read(hold_fd, &c, 1);
	for (unsigned int i = 0; i < KEPT; i++) {
		close(peers[i].fd);
		rt_wire_reader_release(&peers[i].reader);
		free(peers[i].hello);
	}
	return bad;
}

static unsigned int storm_child(const char *path, int unused, int ready_fd)
{
	return storm(path, ready_fd);
}

static bool exited_well(pid_t pid, const char *what)
{
	int status;

	if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status))
		return true;
	fprintf(stderr, "%s: checks failed (status %#x)\n", what, status);
	return false;
}

int main(int argc, char **argv)
{
	unsigned int bad = 0;
	long idle_rss, rss;
	int idle_fds, fds, ready[2], hold[2];
	pid_t daemon, storm_pid, kept_pid;

	if (argc != 4) {
		fprintf(stderr, "usage: storm-clients SOCKET DAEMON_PID SHARE\n");
		return 2;
	}
	daemon = atoi(argv[2]);
	share = (unsigned int)atoi(argv[3]);
	/* A connection turned away is closed before its Hello is written: EPIPE, not death. */
	signal(SIGPIPE, SIG_IGN);
	idle_fds = proc_fds(daemon);
	warm_up(argv[1]);
	if (settle(daemon, idle_fds) != idle_fds)
		fprintf(stderr, "the daemon kept descriptors after the warm-up\n");
	idle_rss = proc_rss_kb(daemon);
	if (pipe(ready) || pipe(hold))
		return 2;
	kept_pid = as_uid(KEPT_UID, kept_during, argv[1], ready[0], hold[0]);
	storm_pid = as_uid(STORM_UID, storm_child, argv[1], -1, ready[1]);
	close(ready[0]);
	close(ready[1]);
	close(hold[0]);
	bad += !exited_well(storm_pid, "storm (uid 65534)");
	close(hold[1]);
	bad += !exited_well(kept_pid, "the other uid (65533)");
	fds = settle(daemon, idle_fds);
	rss = proc_rss_kb(daemon);
	printf("daemon: descriptors %d idle, %d after; RSS %ld kB idle, %ld kB after\n", idle_fds,
	       fds, idle_rss, rss);
	if (fds != idle_fds) {
		fprintf(stderr, "the daemon kept %d descriptors more than idle\n", fds - idle_fds);
		bad++;
	}
	if (rss < 0 || idle_rss < 0 || rss > idle_rss + 256) {
		fprintf(stderr, "the daemon's RSS grew %ld kB over idle\n", rss - idle_rss);
		bad++;
	}
	return bad ? 1 : 0;
}
