/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * tls: the TCP listener's TLS 1.3 with mutual authentication (OpenSSL). Owns
 * the server context (certificate, key, the CA client certificates must be
 * signed by) and each connection's session: a non-blocking handshake, reads
 * and writes that say when they would block, and the verified peer's common
 * name, which the clients file (acl.h) turns into what it may subscribe to.
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "why.h"

struct rt_tls;
struct rt_tls_conn;

/* -errno with the reason, one line, when a file is unusable. */
int rt_tls_new(struct rt_tls **out, const char *cert_file, const char *key_file,
	       const char *ca_file, struct rt_why *why);
void rt_tls_free(struct rt_tls *tls);

int rt_tls_conn_new(struct rt_tls *tls, int fd, struct rt_tls_conn **out);
void rt_tls_conn_free(struct rt_tls_conn *conn);

/*
 * Runs the handshake on: 0 once done (the peer's certificate verified),
 * -EAGAIN until then, -EPROTO or -errno when it failed (rt_tls_conn_error).
 */
int rt_tls_handshake(struct rt_tls_conn *conn);
/* n > 0, 0 at a clean end, -EAGAIN, -errno. */
ssize_t rt_tls_read(struct rt_tls_conn *conn, void *buf, size_t len);
/* n > 0, -EAGAIN, -errno. A retry after -EAGAIN must pass the same bytes again (or more). */
ssize_t rt_tls_write(struct rt_tls_conn *conn, const void *buf, size_t len);
/* Decrypted bytes waiting inside TLS, which the socket no longer shows to epoll. */
bool rt_tls_has_pending(const struct rt_tls_conn *conn);
/* After -EAGAIN: whether the connection waits for room to write rather than for input. */
bool rt_tls_wants_write(const struct rt_tls_conn *conn);
/* Why the last call failed, one line. */
const char *rt_tls_conn_error(const struct rt_tls_conn *conn);
/* The verified peer certificate's subject common name; -ENOENT without one. */
int rt_tls_peer_common_name(const struct rt_tls_conn *conn, char *buf, size_t size);
