/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * token: the resume token a resumable subscriber is given in its Welcome
 * and presents again to go on where its stream was cut (Hello.resume).
 *
 * A token names the daemon's secret (by a random id) and the peer it was
 * given to (uid, or the certificate's name), and is signed with the secret
 * (HMAC-SHA256): no one without the secret can make one, and a token shown
 * by another peer than its own is refused. The secret lives as long as the
 * daemon's session: across restarts and crashes under systemd (fd store),
 * never across a stop. Pure: bytes in, a verdict and its reason out.
 *
 * Layout: "RT", version 1, the secret's id (8 bytes), a hash of the peer's
 * name (4 bytes: which peer it claims), the MAC (16 bytes, truncated).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "why.h"

#define RT_TOKEN_SECRET_SIZE 32u
#define RT_TOKEN_ID_SIZE 8u
#define RT_TOKEN_SIZE 31u
#define RT_TOKEN_PEER_MAX 160u

struct rt_token_secret {
	uint8_t id[RT_TOKEN_ID_SIZE];
	uint8_t key[RT_TOKEN_SECRET_SIZE];
};

/* A new secret from the kernel's random source; 0 or -errno. */
int rt_token_secret_new(struct rt_token_secret *s);

/* The peer's name a token is bound to: "uid:N" over the Unix socket, "cert:NAME" over TCP. */
void rt_token_peer(char *out, size_t size, bool tcp, unsigned int uid, const char *cert_name);

/* The token for peer, in out (RT_TOKEN_SIZE bytes); 0 or -EIO. */
int rt_token_make(const struct rt_token_secret *s, const char *peer, uint8_t *out);

/*
 * 0 when the token was made with s for peer; else -EINVAL (malformed),
 * -ESTALE (another secret: a daemon since stopped, or another host's),
 * -EPERM (another peer's), -EACCES (forged), with why.
 */
int rt_token_check(const struct rt_token_secret *s, const char *peer, const uint8_t *token,
		   size_t len, struct rt_why *why);
