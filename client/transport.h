/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * transport: the byte stream under libringtap. An address is a Unix socket
 * path, "tcp://HOST:PORT" (plain, for a daemon with tcp_insecure) or
 * "tls://HOST:PORT" (TLS 1.3; the daemon's certificate checked against a CA
 * and the host name, this client's certificate presented). Connects within
 * a deadline; reads and writes say when they would block and on what.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rt_transport_tls {
	const char *ca;			/* verifies the daemon's certificate */
	const char *cert, *key;		/* this client's, for the daemon's clients file */
	const char *server_name;	/* NULL: the address's host */
};

struct rt_transport {
	int fd;
	void *ctx;			/* SSL_CTX */
	void *ssl;			/* SSL: NULL on a Unix socket or plain TCP */
	bool wants_write;		/* the last -EAGAIN waits for room to write */
	bool passed;			/* passed_fd came along the bytes (SCM_RIGHTS) */
	int passed_fd;
	char error[256];
};

/* -errno with a one-line reason in t->error. */
int rt_transport_open(struct rt_transport *t, const char *address,
		      const struct rt_transport_tls *tls, int timeout_ms);
void rt_transport_close(struct rt_transport *t);
/* n > 0, 0 at the end, -EAGAIN, -errno (reason in t->error). */
ssize_t rt_transport_read(struct rt_transport *t, void *buf, size_t len);
ssize_t rt_transport_write(struct rt_transport *t, const void *buf, size_t len);
/* The descriptor the peer passed last (the caller's from now on), or -ENOENT. */
int rt_transport_take_fd(struct rt_transport *t);
/* Whether an address is a Unix socket's path, where descriptors may pass. */
bool rt_transport_is_local(const char *address);
/* What poll() should wait for after -EAGAIN. */
short rt_transport_poll_events(const struct rt_transport *t);
