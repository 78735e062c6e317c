// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The listeners: the Unix socket (from systemd, or bound here) with the
 * peer's credentials checked against the allowed group, and the TCP
 * listener for fleet collection (TLS with client certificates, whose
 * common names the clients file maps to event globs; read again on reload).
 */
#include <errno.h>
#include <grp.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "acl.h"
#include "conn.h"
#include "listener.h"
#include "log.h"
#include "read_file.h"
#include "server-opts.h"
#include "tls.h"
#include "util.h"

static bool peer_in_group(int fd, gid_t group, gid_t primary)
{
	gid_t groups[256];
	socklen_t len = sizeof(groups);

	if (primary == group)
		return true;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len))
		return false;
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == group)
			return true;
	return false;
}

/*
 * Whether one more connection may wait for its Hello: room in the daemon
 * (past max_clients a client is still read, to be told why in a Refusal; a
 * flood beyond that is not) and in its peer's own share, so that one peer's
 * flood cannot keep another's subscribers out. When not, why (and a warning
 * once a flood).
 */
static bool may_wait(struct rt_server *srv, const char *owner, char *why, size_t size)
{
	const struct rt_server_limits *l = &srv->limits;
	unsigned int waiting;

	if (srv->n_conns >= l->max_clients + PENDING_CLIENTS) {
		snprintf(why, size, "%u connections are open (max_clients %u, and %u waiting)",
			 srv->n_conns, l->max_clients, PENDING_CLIENTS);
		if (!srv->warned_flood)
			rt_log(LOG_WARNING, "turning connections away unread: %s", why);
		srv->warned_flood = true;
		return false;
	}
	srv->warned_flood = false;
	if (!*owner)
		return true;
	waiting = conn_count_of(srv, owner, CONN_HELLO);
	if (waiting >= l->max_pending_per_peer) {
		snprintf(why, size, "%s has %u connections waiting for their Hello "
			 "(max_pending_per_peer)", owner, waiting);
		if (strcmp(srv->warned_peer, owner))
			rt_log(LOG_WARNING, "turning connections away unread: %s", why);
		snprintf(srv->warned_peer, sizeof(srv->warned_peer), "%s", owner);
		return false;
	}
	if (!strcmp(srv->warned_peer, owner))
		srv->warned_peer[0] = '\0';
	return true;
}

/*
 * A connection turned away unread still hears why: the Refusal fits in a new
 * socket's empty buffer, so a send that does not wait takes it whole (or the
 * peer is gone and nothing is lost by not trying again).
 */
static void turn_away(int fd, const char *why)
{
	struct rt_buf b = { 0 };

	if (!rt_encode_refusal_frame(RINGTAP__REFUSAL_REASON__TOO_MANY_CLIENTS, why, &b))
		(void)send(fd, b.data, b.len, MSG_DONTWAIT | MSG_NOSIGNAL);
	rt_buf_free(&b);
	close(fd);
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct rt_server *srv = userdata;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char owner[sizeof(((struct rt_conn *)0)->owner)], why[160];
	struct rt_conn *c;
	int cfd;

	cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cfd < 0)
		return 0;
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		close(cfd);
		return 0;
	}
	/* Root could stop the daemon outright: a share would defend no one against it. */
	if (cred.uid)
		snprintf(owner, sizeof(owner), "uid %u", (unsigned int)cred.uid);
	else
		owner[0] = '\0';
	if (!may_wait(srv, owner, why, sizeof(why))) {
		turn_away(cfd, why);
		return 0;
	}
	c = conn_new(srv, cfd);
	if (!c) {
		close(cfd);
		return 0;
	}
	c->pid = cred.pid;
	c->uid = cred.uid;
	memcpy(c->owner, owner, sizeof(owner));
	c->authorized = cred.uid == 0 || (srv->have_group && peer_in_group(cfd, srv->group, cred.gid));
	/* On failure the connection is closed and freed: the peer sees its end. */
	(void)conn_add(srv, c, EPOLLIN);
	return 0;
}

/*
 * A TCP client is known by its address until its certificate names it; with
 * tcp_insecure nothing names it and it may select anything.
 */
static int on_accept_tcp(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct rt_server *srv = userdata;
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);
	char host[NI_MAXHOST] = "?", port[NI_MAXSERV] = "?";
	char owner[sizeof(((struct rt_conn *)0)->owner)], why[160];
	struct rt_conn *c;
	unsigned int waiting = 0;
	int cfd, one = 1;

	cfd = accept4(fd, (struct sockaddr *)&sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cfd < 0)
		return 0;
	(void)getnameinfo((struct sockaddr *)&sa, len, host, sizeof(host), port, sizeof(port),
			  NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(owner, sizeof(owner), "address %.64s", host);
	/*
	 * Peers not yet past their Hello have a cap of their own, so that a
	 * stream of handshakes from anywhere cannot take the places of the
	 * local subscribers.
	 */
	for (struct rt_conn *o = srv->conns; o; o = o->next)
		waiting += o->tcp && o->state == CONN_HELLO;
	if (waiting >= PENDING_CLIENTS) {
		snprintf(why, sizeof(why), "%u TCP connections are in their handshake or before "
			 "their Hello", waiting);
		if (!srv->warned_tcp_flood)
			rt_log(LOG_WARNING, "turning TCP connections away: %s", why);
		srv->warned_tcp_flood = true;
	} else {
		srv->warned_tcp_flood = false;
	}
	if (waiting >= PENDING_CLIENTS || !may_wait(srv, owner, why, sizeof(why))) {
		/*
		 * On TLS a Refusal would cost the handshake the flood is made
		 * of: those peers get the bare close.
		 */
		if (srv->tls)
			close(cfd);
		else
			turn_away(cfd, why);
		return 0;
	}
	c = conn_new(srv, cfd);
	if (!c) {
		close(cfd);
		return 0;
	}
	/* Records go out as they come; the queue already batches under load. */
	(void)setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	snprintf(c->peer, sizeof(c->peer), "%s:%s", host, port);
	snprintf(c->name, sizeof(c->name), "%s", c->peer);
	memcpy(c->owner, owner, sizeof(owner));
	c->tcp = true;
	c->pid = 0;
	c->uid = (uid_t)-1;
	if (srv->tls) {
		if (rt_tls_conn_new(srv->tls, cfd, &c->tls)) {
			rt_subscriber_release(&c->out.sub);
			rt_wire_reader_release(&c->reader);
			free(c);
			close(cfd);
			return 0;
		}
		c->handshaking = true;
	} else {
		c->authorized = true;
	}
	(void)conn_add(srv, c, EPOLLIN);
	return 0;
}

static int listen_socket(struct rt_server *srv, const struct rt_server_opts *o)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_free_ char *dir = NULL;
	struct stat st;
	char *slash;
	int n = sd_listen_fds(1), fd;

	if (n > 1) {
		rt_log(LOG_ERR, "systemd passed %d sockets; one is expected", n);
		return -EINVAL;
	}
	if (n == 1) {
		fd = SD_LISTEN_FDS_START;
		if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) <= 0) {
			rt_log(LOG_ERR, "the socket systemd passed is not a listening Unix stream socket");
			return -EINVAL;
		}
		srv->listen_fd = fd;
		rt_log(LOG_INFO, "listening on the socket systemd passed");
		return 0;
	}
	if (strlen(o->socket_path) >= sizeof(sa.sun_path)) {
		rt_log(LOG_ERR, "socket path too long: %s", o->socket_path);
		return -ENAMETOOLONG;
	}
	dir = strdup(o->socket_path);
	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) && errno != EEXIST) {
			int err = errno;

			rt_log(LOG_ERR, "creating %s: %s", dir, strerror(err));
			return -err;
		}
	}
	/*
	 * Bound, given its mode and group and listening under a name of its
	 * own, then renamed into place (over a socket left by an earlier run):
	 * a client that finds the socket can connect to it, where one that came
	 * between bind() and listen() was refused. A path too long for the
	 * extra name is made in place, as before.
	 */
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s.%d", o->socket_path,
			     (int)getpid()) >= sizeof(sa.sun_path))
		strcpy(sa.sun_path, o->socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int err = errno;

		rt_log(LOG_ERR, "creating a Unix socket: %s", strerror(err));
		return -err;
	}
	unlink(sa.sun_path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(sa.sun_path, 0660) ||
	    (srv->have_group && chown(sa.sun_path, (uid_t)-1, srv->group)) || listen(fd, 128) ||
	    (strcmp(sa.sun_path, o->socket_path) && rename(sa.sun_path, o->socket_path))) {
		int err = errno;

		rt_log(LOG_ERR, "listening on %s: %s", o->socket_path, strerror(err));
		unlink(sa.sun_path);
		close(fd);
		return -err;
	}
	srv->listen_fd = fd;
	srv->own_socket = true;
	if (!stat(o->socket_path, &st)) {
		srv->socket_dev = st.st_dev;
		srv->socket_ino = st.st_ino;
	}
	srv->path = strdup(o->socket_path);
	rt_log(LOG_INFO, "listening on %s", o->socket_path);
	return srv->path ? 0 : -ENOMEM;
}

/* "host:port", "[v6]:port" or ":port" (every address). */
static int listen_tcp(struct rt_server *srv, const char *address)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	_cleanup_free_ char *host = strdup(address);
	struct addrinfo *ai = NULL;
	char *port, *h;
	int fd = -1, one = 1, ret;

	if (!host)
		return -ENOMEM;
	port = strrchr(host, ':');
	if (!port) {
		rt_log(LOG_ERR, "listen_tcp '%s': want host:port", address);
		return -EINVAL;
	}
	*port++ = '\0';
	h = host;
	if (*h == '[' && h[strlen(h) - 1] == ']') {
		h[strlen(h) - 1] = '\0';
		h++;
	}
	ret = getaddrinfo(*h ? h : NULL, port, &hints, &ai);
	if (ret) {
		rt_log(LOG_ERR, "listen_tcp '%s': %s", address, gai_strerror(ret));
		return -EINVAL;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 128)) {
		ret = -errno;
		rt_log(LOG_ERR, "listening on TCP %s: %s%s", address, strerror(-ret),
		       ret == -EAFNOSUPPORT ? " (the unit allows no network: install its fleet "
					      "drop-in, see FLEET.md)" : "");
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return ret;
	}
	freeaddrinfo(ai);
	srv->tcp_fd = fd;
	return 0;
}

static int load_clients(const char *path, struct rt_acl **out)
{
	_cleanup_free_ char *text = NULL;
	struct rt_why why = { "" };
	unsigned int line;
	size_t len;
	int ret = rt_read_file(path, 1 << 20, &text, &len);

	if (ret) {
		rt_log(LOG_ERR, "reading %s: %s", path, strerror(-ret));
		return ret;
	}
	ret = rt_acl_parse(out, text, len, &line, &why);
	if (ret)
		rt_log(LOG_ERR, "%s:%u: %s", path, line, why.text[0] ? why.text : strerror(-ret));
	return ret;
}

static bool same_globs(const char *const *a, const char *const *b)
{
	for (; a && b && *a && *b; a++, b++)
		if (strcmp(*a, *b))
			return false;
	return a && b && !*a && !*b;
}

int listener_reload_clients(struct rt_server *srv)
{
	struct rt_acl *acl = NULL;
	unsigned int cut = 0;
	int ret;

	if (!srv->clients_path)
		return 0;
	ret = load_clients(srv->clients_path, &acl);
	if (ret) {
		rt_log(LOG_ERR, "reload: %s kept as it was", srv->clients_path);
		return ret;
	}
	/*
	 * A name no longer listed, or listed with other globs, loses its
	 * connections: what it selected was decided under the old entry.
	 */
	for (struct rt_conn *c = srv->conns, *next; c; c = next) {
		const char *const *now;

		next = c->next;
		if (!c->common_name)
			continue;
		now = rt_acl_lookup(acl, c->common_name);
		if (c->allowed && same_globs(now, c->allowed)) {
			c->allowed = now;
			continue;
		}
		cut++;
		if (c->state == CONN_STREAMING)
			conn_send_error(c, EACCES, "this certificate's entry in the clients file was "
					"removed or changed");
		else
			conn_close(c, "its clients file entry was removed or changed");
	}
	rt_acl_free(srv->acl);
	srv->acl = acl;
	rt_log(LOG_INFO, "reload: %s read again; %u connection(s) of changed names ended",
	       srv->clients_path, cut);
	return 0;
}

/* The TCP listener, when configured: TLS with client certificates, or plain when insecure. */
static int setup_tcp(struct rt_server *srv, const struct rt_server_opts *o)
{
	struct rt_why why = { "" };
	int ret;

	if (!o->tcp_listen)
		return 0;
	if (o->tcp_insecure) {
		rt_log(LOG_WARNING, "TCP %s is plain and unauthenticated (tcp_insecure): anyone who "
		       "reaches it may subscribe to any event", o->tcp_listen);
	} else {
		if (!o->tls_cert || !o->tls_key || !o->tls_ca || !o->tls_clients) {
			rt_log(LOG_ERR, "listen_tcp needs tls_cert, tls_key, tls_ca and tls_clients "
			       "(or tcp_insecure)");
			return -EINVAL;
		}
		ret = rt_tls_new(&srv->tls, o->tls_cert, o->tls_key, o->tls_ca, &why);
		if (ret) {
			rt_log(LOG_ERR, "TLS: %s", why.text);
			return ret;
		}
		srv->clients_path = strdup(o->tls_clients);
		if (!srv->clients_path)
			return -ENOMEM;
		ret = load_clients(srv->clients_path, &srv->acl);
		if (ret)
			return ret;
	}
	ret = listen_tcp(srv, o->tcp_listen);
	if (ret)
		return ret;
	rt_log(LOG_INFO, "listening on TCP %s (%s)", o->tcp_listen,
	       srv->tls ? "TLS 1.3, client certificates" : "plain");
	ret = sd_event_add_io(srv->loop, &srv->tcp_src, srv->tcp_fd, EPOLLIN, on_accept_tcp, srv);
	if (ret < 0)
		rt_log(LOG_ERR, "watching the TCP listener: %s", strerror(-ret));
	return ret;
}

int listener_open(struct rt_server *srv, const struct rt_server_opts *o)
{
	int ret;

	if (o->group) {
		struct group *g = getgrnam(o->group);

		if (!g) {
			rt_log(LOG_WARNING, "group %s does not exist: only root may subscribe",
			       o->group);
		} else {
			srv->group = g->gr_gid;
			srv->have_group = true;
		}
	}
	ret = listen_socket(srv, o);
	if (ret)
		return ret;
	ret = sd_event_add_io(srv->loop, &srv->listen_src, srv->listen_fd, EPOLLIN, on_accept, srv);
	if (ret < 0) {
		rt_log(LOG_ERR, "watching the Unix socket: %s", strerror(-ret));
		return ret;
	}
	return setup_tcp(srv, o);
}

void listener_close(struct rt_server *srv)
{
	sd_event_source_disable_unref(srv->listen_src);
	sd_event_source_disable_unref(srv->tcp_src);
	if (srv->tcp_fd >= 0)
		close(srv->tcp_fd);
	rt_tls_free(srv->tls);
	rt_acl_free(srv->acl);
	free(srv->clients_path);
	if (srv->listen_fd >= 0 && srv->own_socket) {
		struct stat st;

		close(srv->listen_fd);
		/* A daemon started since on the same path renamed its socket over ours: it stays. */
		if (srv->path && !stat(srv->path, &st) && st.st_dev == srv->socket_dev &&
		    st.st_ino == srv->socket_ino)
			unlink(srv->path);
	}
	free(srv->path);
}
