// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "transport.h"

static int set_error(struct rt_transport *t, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Around every OpenSSL call: its error queue and errno start clean (they say
 * why it failed), and SIGPIPE is held off. OpenSSL writes with write(),
 * which raises SIGPIPE on a closed connection; a library must not change the
 * program's signal handling, so the signal is blocked in this thread for the
 * call and taken back if it came.
 */
struct sigpipe_guard {
	sigset_t old;
	bool was_pending;
};

static void ssl_call_begin(struct sigpipe_guard *g)
{
	sigset_t pipe, pending;

	ERR_clear_error();
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	sigpending(&pending);
	g->was_pending = sigismember(&pending, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, &g->old);
	errno = 0;
}

static void ssl_call_end(struct sigpipe_guard *g)
{
	sigset_t pipe, pending;
	struct timespec zero = { 0, 0 };
	int saved = errno;	/* what the SSL call left, for its error */

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	sigpending(&pending);
	if (!g->was_pending && sigismember(&pending, SIGPIPE))
		while (sigtimedwait(&pipe, NULL, &zero) < 0 && errno == EINTR)
			;
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
	errno = saved;
}

static int set_error(struct rt_transport *t, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->error, sizeof(t->error), fmt, ap);
	va_end(ap);
	return err;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int left_ms(int64_t deadline)
{
	int64_t left = deadline - now_ms();

	return left > 0 ? (int)left : 0;
}

static int open_unix(struct rt_transport *t, const char *path, int timeout_ms)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = timeout_ms % 1000 * 1000 };
	int fd, ret;

	if (strlen(path) >= sizeof(sa.sun_path))
		return set_error(t, -ENAMETOOLONG, "socket path too long: %s", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return set_error(t, -errno, "socket: %s", strerror(errno));
	/* Bounds a connect() that waits for room in a full listen backlog. */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)) {
		ret = -errno;
		close(fd);
		return set_error(t, ret, "cannot connect to %s: %s", path, strerror(-ret));
	}
	t->fd = fd;
	return 0;
}

/* Splits "host:port" or "[v6]:port" in place. */
static int split_host_port(char *hostport, char **host, char **port)
{
	char *colon = strrchr(hostport, ':');

	if (!colon || colon == hostport || !colon[1])
		return -EINVAL;
	*colon = '\0';
	*port = colon + 1;
	*host = hostport;
	if (**host == '[' && colon[-1] == ']') {
		colon[-1] = '\0';
		(*host)++;
	}
	return 0;
}

static int open_tcp(struct rt_transport *t, const char *host, const char *port, int64_t deadline)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *ai, *a;
	int ret, fd = -1, err = ECONNREFUSED, one = 1;

	ret = getaddrinfo(host, port, &hints, &ai);
	if (ret)
		return set_error(t, -EHOSTUNREACH, "%s:%s: %s", host, port, gai_strerror(ret));
	for (a = ai; a; a = a->ai_next) {
		struct pollfd pfd;
		socklen_t len = sizeof(err);

		fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			err = errno;
			continue;
		}
		if (!connect(fd, a->ai_addr, a->ai_addrlen))
			break;
		err = errno;
		if (err == EINPROGRESS) {
			pfd = (struct pollfd){ .fd = fd, .events = POLLOUT };
			ret = poll(&pfd, 1, left_ms(deadline));
			if (ret == 0)
				err = ETIMEDOUT;
			else if (ret < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
				err = errno;
			if (ret > 0 && !err)
				break;
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		return set_error(t, -err, "cannot connect to %s:%s: %s", host, port, strerror(err));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	t->fd = fd;
	return 0;
}

static void ssl_error_line(struct rt_transport *t, const char *what)
{
	unsigned long e = ERR_get_error();
	char reason[200] = "connection closed";
	long verify = t->ssl ? SSL_get_verify_result(t->ssl) : X509_V_OK;

	if (e)
		ERR_error_string_n(e, reason, sizeof(reason));
	ERR_clear_error();
	if (verify != X509_V_OK)
		set_error(t, 0, "%s: %s (%s)", what, reason, X509_verify_cert_error_string(verify));
	else
		set_error(t, 0, "%s: %s", what, reason);
}

/* Maps an OpenSSL failure to -EAGAIN (and on what) or -errno with the reason. */
static int ssl_result(struct rt_transport *t, const char *what)
{
	int err = SSL_get_error(t->ssl, 0);

	t->wants_write = err == SSL_ERROR_WANT_WRITE;
	if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE)
		return -EAGAIN;
	if (err == SSL_ERROR_ZERO_RETURN)
		return 0;
	if (err == SSL_ERROR_SYSCALL && errno) {
		int e = errno;

		ERR_clear_error();
		return set_error(t, -e, "%s: %s", what, strerror(e));
	}
	ssl_error_line(t, what);
	return -EPROTO;
}

static int start_tls(struct rt_transport *t, const char *host, const struct rt_transport_tls *o,
		     int64_t deadline)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	const char *name = o && o->server_name ? o->server_name : host;
	const char *what = "TLS setup";
	int ret;

	t->ctx = ctx;
	if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION))
		goto fail;
	what = o && o->ca ? o->ca : "the system's CA certificates";
	if ((o && o->ca) ? SSL_CTX_load_verify_locations(ctx, o->ca, NULL) != 1 :
			   SSL_CTX_set_default_verify_paths(ctx) != 1)
		goto fail;
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	what = o && o->cert ? o->cert : "";
	if (o && o->cert && SSL_CTX_use_certificate_chain_file(ctx, o->cert) != 1)
		goto fail;
	what = o && o->key ? o->key : "";
	if (o && o->key && (SSL_CTX_use_PrivateKey_file(ctx, o->key, SSL_FILETYPE_PEM) != 1 ||
			    SSL_CTX_check_private_key(ctx) != 1))
		goto fail;
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	/* A daemon killed mid-stream is a cut stream (RINGTAP_END), not a protocol error. */
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
	what = "TLS setup";
	t->ssl = SSL_new(ctx);
	if (!t->ssl || SSL_set_fd(t->ssl, t->fd) != 1 || SSL_set1_host(t->ssl, name) != 1)
		goto fail;
	/* The name the daemon's certificate must carry, in SNI too unless it is an address. */
	if (!strchr(name, ':') && strspn(name, "0123456789.") != strlen(name))
		SSL_set_tlsext_host_name(t->ssl, name);
	for (;;) {
		struct pollfd pfd = { .fd = t->fd };
		struct sigpipe_guard g;

		ssl_call_begin(&g);
		ret = SSL_connect(t->ssl);
		ssl_call_end(&g);
		if (ret == 1)
			return 0;
		ret = ssl_result(t, "TLS handshake");
		if (ret != -EAGAIN)
			return ret ?: set_error(t, -ECONNRESET, "TLS handshake: connection closed");
		pfd.events = rt_transport_poll_events(t);
		ret = poll(&pfd, 1, left_ms(deadline));
		if (ret == 0)
			return set_error(t, -ETIMEDOUT, "TLS handshake: timed out");
		if (ret < 0 && errno != EINTR)
			return set_error(t, -errno, "poll: %s", strerror(errno));
	}
fail:
	ssl_error_line(t, what);
	return -EINVAL;
}

int rt_transport_open(struct rt_transport *t, const char *address,
		      const struct rt_transport_tls *tls, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	bool use_tls = !strncmp(address, "tls://", 6);
	char *copy, *host, *port;
	int ret;

	memset(t, 0, sizeof(*t));
	t->fd = -1;
	if (!use_tls && strncmp(address, "tcp://", 6))
		return open_unix(t, address, timeout_ms);
	copy = strdup(address + 6);
	if (!copy)
		return set_error(t, -ENOMEM, "out of memory");
	if (split_host_port(copy, &host, &port)) {
		free(copy);
		return set_error(t, -EINVAL, "%s: want tls://HOST:PORT or tcp://HOST:PORT", address);
	}
	ret = open_tcp(t, host, port, deadline);
	if (!ret && use_tls)
		ret = start_tls(t, host, tls, deadline);
	free(copy);
	if (ret)
		rt_transport_close(t);
	return ret;
}

void rt_transport_close(struct rt_transport *t)
{
	if (t->ssl) {
		struct sigpipe_guard g;

		/* Best effort close_notify: the daemon tells a clean close from a cut. */
		ssl_call_begin(&g);
		if (SSL_is_init_finished(t->ssl))
			SSL_shutdown(t->ssl);
		ssl_call_end(&g);
		SSL_free(t->ssl);
	}
	SSL_CTX_free(t->ctx);
	ERR_clear_error();
	if (t->fd >= 0)
		close(t->fd);
	if (t->passed)
		close(t->passed_fd);
	t->passed = false;
	t->ssl = t->ctx = NULL;
	t->fd = -1;
}

/*
 * recv(), keeping a descriptor the peer passed along (SCM_RIGHTS, a RING
 * client's ring): the last one is kept, any other closed.
 */
static ssize_t recv_passing(struct rt_transport *t, void *buf, size_t len)
{
	union {
		struct cmsghdr align;
		char room[CMSG_SPACE(sizeof(int))];
	} control;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.room,
			      .msg_controllen = sizeof(control.room) };
	ssize_t n = recvmsg(t->fd, &msg, MSG_CMSG_CLOEXEC);

	for (struct cmsghdr *cm = n >= 0 ? CMSG_FIRSTHDR(&msg) : NULL; cm;
	     cm = CMSG_NXTHDR(&msg, cm)) {
		size_t fds = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int fd;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < fds; i++) {
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (t->passed)
				close(t->passed_fd);
			t->passed_fd = fd;
			t->passed = true;
		}
	}
	return n;
}

int rt_transport_take_fd(struct rt_transport *t)
{
	if (!t->passed)
		return -ENOENT;
	t->passed = false;
	return t->passed_fd;
}

bool rt_transport_is_local(const char *address)
{
	return strncmp(address, "tls://", 6) && strncmp(address, "tcp://", 6);
}

ssize_t rt_transport_read(struct rt_transport *t, void *buf, size_t len)
{
	ssize_t n;

	if (t->ssl) {
		struct sigpipe_guard g;
		size_t got = 0;
		int ok;

		/* A read may write too (a key update's answer). */
		ssl_call_begin(&g);
		ok = SSL_read_ex(t->ssl, buf, len, &got);
		ssl_call_end(&g);
		if (ok == 1)
			return (ssize_t)got;
		return ssl_result(t, "TLS read");
	}
	do
		n = recv_passing(t, buf, len);
	while (n < 0 && errno == EINTR);
	t->wants_write = false;
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return -EAGAIN;
	if (n < 0)
		return set_error(t, -errno, "%s", strerror(errno));
	return n;
}

ssize_t rt_transport_write(struct rt_transport *t, const void *buf, size_t len)
{
	ssize_t n;

	if (t->ssl) {
		struct sigpipe_guard g;
		size_t put = 0;
		int ret, ok;

		ssl_call_begin(&g);
		ok = SSL_write_ex(t->ssl, buf, len, &put);
		ssl_call_end(&g);
		if (ok == 1)
			return (ssize_t)put;
		ret = ssl_result(t, "TLS write");
		return ret ?: set_error(t, -EPIPE, "TLS write: connection closed");
	}
	do
		n = send(t->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	/* A write waits for room, whatever the last read said. */
	t->wants_write = true;
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return -EAGAIN;
	if (n < 0)
		return set_error(t, -errno, "%s", strerror(errno));
	return n;
}

short rt_transport_poll_events(const struct rt_transport *t)
{
	return t->wants_write ? POLLOUT : POLLIN;
}
