// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "token.h"

#define TOKEN_VERSION 1
#define MAC_OFFSET (3 + RT_TOKEN_ID_SIZE + 4)
#define MAC_SIZE (RT_TOKEN_SIZE - MAC_OFFSET)

int rt_token_secret_new(struct rt_token_secret *s)
{
	uint8_t bytes[sizeof(s->id) + sizeof(s->key)];
	size_t got = 0;

	while (got < sizeof(bytes)) {
		ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);

		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0)
			got += (size_t)n;
	}
	memcpy(s->id, bytes, sizeof(s->id));
	memcpy(s->key, bytes + sizeof(s->id), sizeof(s->key));
	OPENSSL_cleanse(bytes, sizeof(bytes));
	return 0;
}

void rt_token_peer(char *out, size_t size, bool tcp, unsigned int uid, const char *cert_name)
{
	if (tcp)
		snprintf(out, size, "cert:%s", cert_name ? cert_name : "");
	else
		snprintf(out, size, "uid:%u", uid);
}

/* Which peer a token claims: readable by anyone, proves nothing (the MAC does). */
static void peer_hash(const char *peer, uint8_t out[4])
{
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;

	EVP_Digest(peer, strlen(peer), md, &len, EVP_sha256(), NULL);
	memcpy(out, md, 4);
}

static int mac(const struct rt_token_secret *s, const uint8_t *head, const char *peer,
	       uint8_t out[MAC_SIZE])
{
	uint8_t msg[MAC_OFFSET + RT_TOKEN_PEER_MAX];
	uint8_t md[EVP_MAX_MD_SIZE];
	size_t plen = strnlen(peer, RT_TOKEN_PEER_MAX);
	unsigned int len = 0;

	memcpy(msg, head, MAC_OFFSET);
	memcpy(msg + MAC_OFFSET, peer, plen);
	if (!HMAC(EVP_sha256(), s->key, sizeof(s->key), msg, MAC_OFFSET + plen, md, &len) ||
	    len < MAC_SIZE)
		return -EIO;
	memcpy(out, md, MAC_SIZE);
	return 0;
}

int rt_token_make(const struct rt_token_secret *s, const char *peer, uint8_t *out)
{
	out[0] = 'R';
	out[1] = 'T';
	out[2] = TOKEN_VERSION;
	memcpy(out + 3, s->id, RT_TOKEN_ID_SIZE);
	peer_hash(peer, out + 3 + RT_TOKEN_ID_SIZE);
	return mac(s, out, peer, out + MAC_OFFSET);
}

int rt_token_check(const struct rt_token_secret *s, const char *peer, const uint8_t *token,
		   size_t len, struct rt_why *why)
{
	uint8_t want[MAC_SIZE], claimed[4];

	if (len != RT_TOKEN_SIZE || token[0] != 'R' || token[1] != 'T')
		return rt_why_set(why, -EINVAL, "the resume token is malformed (%zu bytes, not one "
				  "of ringtapd's)", len);
	if (token[2] != TOKEN_VERSION)
		return rt_why_set(why, -EINVAL, "the resume token is of version %u, this ringtapd "
				  "reads %u", token[2], TOKEN_VERSION);
	if (memcmp(token + 3, s->id, RT_TOKEN_ID_SIZE))
		return rt_why_set(why, -ESTALE, "the resume token is stale: it was given by a "
				  "ringtapd since stopped, or on another host");
	peer_hash(peer, claimed);
	if (memcmp(token + 3 + RT_TOKEN_ID_SIZE, claimed, sizeof(claimed)))
		return rt_why_set(why, -EPERM, "the resume token was given to another peer, not "
				  "to %s", peer);
	if (mac(s, token, peer, want))
		return rt_why_set(why, -EIO, "cannot check the resume token");
	if (CRYPTO_memcmp(want, token + MAC_OFFSET, MAC_SIZE))
		return rt_why_set(why, -EACCES, "the resume token is forged (its signature is not "
				  "this ringtapd's)");
	return 0;
}
