// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ring-client: a RING transport client of its own (not libringtap), for
 * the daemon's side of it.
 *
 *   ring-client SOCKET read EVENTS OUT   Hello with transport RING: takes the
 *       descriptor that comes with the Ring frame (recvmsg), checks that
 *       neither it nor the memfd opened again through /proc writes, maps it, and
 *       after each RingReady and at the Bye reads every CPU's pages with
 *       rt_ring_read; each page's bytes go to OUT.cpuN. Prints
 *       "pages=P records=R lost=L" (lost: every cause rt_ring_read gives).
 *       Once mapped, it sends an Update with what only a ring reader's RAW
 *       may ask (pids, a filter, common fields): an Error would end it.
 *   ring-client SOCKET raw EVENTS OUT    the same pages over the socket (RAW,
 *       version 1), for comparison: same output.
 *   ring-client SOCKET idle EVENTS FILE  RING, maps the ring, creates FILE and
 *       then never reads its socket again (until killed).
 *   ring-client HOST:PORT tcp EVENTS -   a RING Hello over TCP: prints the
 *       Refusal's text, exits 0 when refused.
 * Exits 1 for a protocol surprise, 2 when it cannot connect.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dial.h"
#include "ring.h"
#include "wire.h"

struct state {
	const char *mode, *out, *events;
	int sock;
	int fd;			/* the ring's, once received */
	struct rt_ring ring;
	struct rt_ring_cursor *cur;
	unsigned int ncpus;
	uint8_t *page;
	FILE **files;
	uint64_t pages, records, lost;
	bool bye;
};

static void die(const char *what)
{
	fprintf(stderr, "ring-client: %s\n", what);
	exit(1);
}

static void put_page(struct state *s, unsigned int cpu, const void *data, size_t len)
{
	char path[4096];

	if (!s->files[cpu]) {
		snprintf(path, sizeof(path), "%s.cpu%u", s->out, cpu);
		s->files[cpu] = fopen(path, "w");
		if (!s->files[cpu])
			die("cannot write the output");
	}
	fwrite(data, 1, len, s->files[cpu]);
	s->pages++;
}

static void read_ring(struct state *s)
{
	struct rt_ring_read r;

	for (unsigned int cpu = 0; cpu < s->ncpus; cpu++) {
		int ret;

		while ((ret = rt_ring_read(&s->ring, cpu, &s->cur[cpu], s->page,
					   s->ring.head.page_size, &r)) == 1) {
			s->records += r.records;
			s->lost += r.lost_kernel + r.lost_kernel_inexact + r.lost_ring +
				   r.lost_malformed;
			put_page(s, cpu, s->page, r.len);
		}
		if (ret < 0)
			die("rt_ring_read: the ring contradicts itself");
	}
}

static void send_frame(int fd, const Ringtap__Frame *f)
{
	uint8_t *out;
	size_t len;

	if (rt_wire_encode(f, &out, &len) || write(fd, out, len) != (ssize_t)len)
		die("cannot send a frame");
	free(out);
}

/* Pids, a filter and common fields: refused to a RAW socket subscriber, a ring reader's library's. */
static void send_update(struct state *s)
{
	Ringtap__Frame f = RINGTAP__FRAME__INIT;
	Ringtap__Update u = RINGTAP__UPDATE__INIT;
	Ringtap__Subscription sub = RINGTAP__SUBSCRIPTION__INIT;
	char *events = (char *)s->events;
	int32_t pids[] = { 1, 2 };

	sub.events = &events;
	sub.n_events = 1;
	sub.pids = pids;
	sub.n_pids = 2;
	sub.filter = "common_pid >= 0";
	sub.has_common_fields = true;
	sub.common_fields = true;
	u.subscription = &sub;
	f.msg_case = RINGTAP__FRAME__MSG_UPDATE;
	f.update = &u;
	send_frame(s->sock, &f);
}

/*
 * Opened again through /proc with write access (which its mode allows),
 * the memfd still takes no write: the daemon sealed it (F_SEAL_FUTURE_WRITE).
 * The byte written back is the one read, should the seal be missing.
 */
static void reopen_sealed(int fd)
{
	char path[64];
	uint8_t byte;
	int rw;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rw = open(path, O_RDWR | O_CLOEXEC);
	if (rw < 0)
		return;		/* not even opened for writing */
	if (pread(rw, &byte, 1, 0) != 1)
		die("cannot read the ring through /proc");
	if (pwrite(rw, &byte, 1, 0) >= 0 || errno != EPERM)
		die("the ring, opened again through /proc, takes a write");
	close(rw);
}

static void on_ring(struct state *s, const Ringtap__Ring *m)
{
	void *base;

	if (s->fd < 0)
		die("a Ring frame without its descriptor");
	if (m->n_start_page != s->ncpus || m->n_events_before != s->ncpus ||
	    m->n_kernel_lost != s->ncpus || m->n_kernel_inexact != s->ncpus ||
	    m->n_malformed != s->ncpus)
		die("a Ring frame without a count per CPU");
	/* Read-only: a writable mapping must be refused. */
	if (mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0) != MAP_FAILED)
		die("the ring's descriptor maps for writing");
	reopen_sealed(s->fd);
	base = mmap(NULL, m->size, PROT_READ, MAP_SHARED, s->fd, 0);
	if (base == MAP_FAILED || rt_ring_attach(&s->ring, base, m->size))
		die("cannot map or attach the ring");
	s->page = malloc(s->ring.head.page_size);
	s->cur = calloc(s->ncpus, sizeof(*s->cur));
	if (!s->page || !s->cur)
		die("out of memory");
	for (unsigned int cpu = 0; cpu < s->ncpus; cpu++)
		rt_ring_cursor_start(&s->cur[cpu], m->start_page[cpu], m->events_before[cpu],
				     m->kernel_lost[cpu], m->kernel_inexact[cpu], m->malformed[cpu]);
	if (!strcmp(s->mode, "idle")) {
		FILE *f = fopen(s->out, "w");

		if (f)
			fclose(f);
		for (;;)
			pause();
	}
	send_update(s);
}

/* Returns true when the stream is done. */
static bool on_frame(struct state *s, const Ringtap__Frame *f)
{
	switch (f->msg_case) {
	case RINGTAP__FRAME__MSG_REFUSAL:
		printf("refused: %s\n", f->refusal->text);
		exit(strcmp(s->mode, "tcp") ? 1 : 0);
	case RINGTAP__FRAME__MSG_WELCOME:
		s->ncpus = f->welcome->cpus;
		s->files = calloc(s->ncpus, sizeof(*s->files));
		if (!s->files)
			die("out of memory");
		if (strcmp(s->mode, "raw") && f->welcome->version != 2)
			die("RING served at a version other than 2");
		return false;
	case RINGTAP__FRAME__MSG_RING:
		on_ring(s, f->ring);
		return false;
	case RINGTAP__FRAME__MSG_RING_READY:
		if (!s->cur)
			die("a RingReady before the Ring");
		read_ring(s);
		return false;
	case RINGTAP__FRAME__MSG_PAGES:
		if (strcmp(s->mode, "raw"))
			die("Pages to a ring reader");
		for (size_t i = 0; i < f->pages->n_pages; i++) {
			put_page(s, f->pages->cpu, f->pages->pages[i].data, f->pages->pages[i].len);
			s->records += i < f->pages->n_records ? f->pages->records[i] : 0;
		}
		return false;
	case RINGTAP__FRAME__MSG_LOST:
		s->lost += f->lost->count;
		if (strcmp(s->mode, "raw"))
			die("Lost to a ring reader");
		return false;
	case RINGTAP__FRAME__MSG_BATCH:
	case RINGTAP__FRAME__MSG_FIXED:
		die("records to a page reader");
		return true;
	case RINGTAP__FRAME__MSG_ERROR:
		fprintf(stderr, "ring-client: Error: %s\n", f->error->text);
		exit(1);
	case RINGTAP__FRAME__MSG_BYE:
		if (s->cur)
			read_ring(s);
		return true;
	default:
		return false;
	}
}

static int dial_tcp(const char *hostport)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char host[64];
	const char *colon = strrchr(hostport, ':');
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (!colon || (size_t)(colon - hostport) >= sizeof(host))
		die("HOST:PORT");
	memcpy(host, hostport, (size_t)(colon - hostport));
	host[colon - hostport] = '\0';
	sa.sin_port = htons((uint16_t)atoi(colon + 1));
	if (fd < 0 || inet_pton(AF_INET, host, &sa.sin_addr) != 1 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror(hostport);
		exit(2);
	}
	return fd;
}

static void send_hello(int fd, bool ring, char *events)
{
	Ringtap__Frame f = RINGTAP__FRAME__INIT;
	Ringtap__Hello h = RINGTAP__HELLO__INIT;
	Ringtap__Subscription sub = RINGTAP__SUBSCRIPTION__INIT;
	Ringtap__Encoding raw = RINGTAP__ENCODING__RAW;

	h.min_version = 1;
	h.max_version = ring ? 2 : 1;
	h.encodings = &raw;
	h.n_encodings = 1;
	h.client_name = ring ? "ring-client" : "ring-client raw";
	h.has_transport = ring;
	h.transport = RINGTAP__TRANSPORT__RING;
	sub.events = &events;
	sub.n_events = 1;
	h.subscription = &sub;
	f.msg_case = RINGTAP__FRAME__MSG_HELLO;
	f.hello = &h;
	send_frame(fd, &f);
}

int main(int argc, char **argv)
{
	struct state s = { .fd = -1 };
	struct rt_wire_reader reader;
	static uint8_t buf[1 << 16];
	bool done = false;
	int fd;

	if (argc != 5) {
		fprintf(stderr, "usage: ring-client SOCKET read|raw|idle|tcp EVENTS OUT\n");
		return 2;
	}
	s.mode = argv[2];
	s.out = argv[4];
	s.events = argv[3];
	fd = !strcmp(s.mode, "tcp") ? dial_tcp(argv[1]) : dial(argv[1]);
	s.sock = fd;
	send_hello(fd, strcmp(s.mode, "raw") != 0, argv[3]);
	rt_wire_reader_init(&reader, 0);
	while (!done) {
		union {
			struct cmsghdr align;
			char buf[CMSG_SPACE(sizeof(int))];
		} control;
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
				      .msg_controllen = sizeof(control.buf) };
		ssize_t n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);

		if (n <= 0)
			die(n ? "recvmsg failed" : "the daemon closed before its Bye");
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
				if (s.fd >= 0)
					die("a second descriptor");
				memcpy(&s.fd, CMSG_DATA(cm), sizeof(int));
			}
		for (size_t off = 0; off < (size_t)n && !done;) {
			Ringtap__Frame *f = NULL;
			size_t used = 0;
			int ret = rt_wire_reader_feed(&reader, buf + off, (size_t)n - off, &used);

			off += used;
			if (ret >= 0)
				ret = rt_wire_reader_next(&reader, &f);
			if (ret < 0)
				die("a bad frame");
			if (ret == 0)
				break;
			done = on_frame(&s, f);
			ringtap__frame__free_unpacked(f, NULL);
		}
	}
	if (!strcmp(s.mode, "tcp"))
		die("a RING Hello over TCP was served");
	for (unsigned int cpu = 0; cpu < s.ncpus; cpu++)
		if (s.files[cpu])
			fclose(s.files[cpu]);
	printf("pages=%llu records=%llu lost=%llu\n", (unsigned long long)s.pages,
	       (unsigned long long)s.records, (unsigned long long)s.lost);
	rt_wire_reader_release(&reader);
	return 0;
}
