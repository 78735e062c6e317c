/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * server-opts: what the server is started with and what a reload may
 * change: types alone, so that the server's own files (listener.c, conn.h)
 * need not include its face (server.h) to read them.
 */
#include <stdbool.h>
#include <stddef.h>

struct rt_buf;

/* What a reload may change for connections from then on. */
struct rt_server_limits {
	size_t max_queue;		/* bytes per subscriber */
	unsigned int max_clients;
	unsigned int max_events;	/* events one subscription may select */
	/*
	 * One peer (a uid on the Unix socket, a certificate's name on TLS, an
	 * address before that or on plain TCP) may hold this many subscriptions
	 * (0: half of max_clients) and this many connections before their Hello.
	 */
	unsigned int max_clients_per_peer;
	unsigned int max_pending_per_peer;
};

struct rt_token_secret;

struct rt_server_opts {
	const char *socket_path;	/* used when systemd passed no socket */
	const char *group;		/* peers in it may subscribe; NULL: root only */
	struct rt_server_limits limits;
	/* TCP for fleet collection: NULL keeps it off. */
	const char *tcp_listen;		/* "host:port" */
	const char *tls_cert, *tls_key;	/* this daemon's certificate chain and key (PEM) */
	const char *tls_ca;		/* client certificates must be signed by it */
	const char *tls_clients;	/* common name -> event globs (acl.h) */
	bool tcp_insecure;		/* plain TCP, no authentication: logs a warning */
	bool user_space_selection;	/* no kernel filters or pid lists (kernel_selection = 0) */
	/* Resume tokens are signed with it: kept across restarts; NULL: a new one for this run. */
	const struct rt_token_secret *resume_secret;
	/* Called when rt_server_latency_ms() may have changed: a subscriber came, left or asked again. */
	void (*latency_changed)(void *userdata);
	/*
	 * A subscriber said Bye: true when a drain pass comes at once, with
	 * rt_server_pass_done() after it; false (stopping, or not reading yet):
	 * the Bye is answered now.
	 */
	bool (*pass_wanted)(void *userdata);
	/* A Hello asked for the counters: the Status frame into frame; 0 or -ENOMEM. */
	int (*status)(void *userdata, struct rt_buf *frame);
	void *userdata;
};
