// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Resume tokens: one made for a peer checks for that peer with the same
 * secret; another peer's name, another secret, a changed byte anywhere,
 * a cut or a longer token are each refused with their own errno, and two
 * secrets are never the same.
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "token.h"

static void test_round_trip(void)
{
	struct rt_token_secret s, other;
	uint8_t t[RT_TOKEN_SIZE], u[RT_TOKEN_SIZE + 1];
	char peer[RT_TOKEN_PEER_MAX];
	struct rt_why why = { "" };

	CHECK_EQ(rt_token_secret_new(&s), 0);
	CHECK_EQ(rt_token_secret_new(&other), 0);
	CHECK(memcmp(&s, &other, sizeof(s)));
	rt_token_peer(peer, sizeof(peer), false, 1000, NULL);
	CHECK_STR(peer, "uid:1000");
	CHECK_EQ(rt_token_make(&s, peer, t), 0);
	CHECK_EQ(rt_token_check(&s, peer, t, sizeof(t), &why), 0);
	CHECK_EQ(rt_token_check(&s, "uid:1001", t, sizeof(t), &why), -EPERM);
	CHECK(strstr(why.text, "another peer") != NULL);
	CHECK_EQ(rt_token_check(&other, peer, t, sizeof(t), &why), -ESTALE);
	CHECK_EQ(rt_token_check(&s, peer, t, sizeof(t) - 1, &why), -EINVAL);
	memcpy(u, t, sizeof(t));
	u[sizeof(t)] = 0;
	CHECK_EQ(rt_token_check(&s, peer, u, sizeof(u), &why), -EINVAL);
	/* Every byte counts: the mark and version, the secret's id, the peer, the MAC. */
	for (size_t i = 0; i < sizeof(t); i++) {
		int want = i < 3 ? -EINVAL : i < 3 + RT_TOKEN_ID_SIZE ? -ESTALE :
			   i < 3 + RT_TOKEN_ID_SIZE + 4 ? -EPERM : -EACCES;

		memcpy(u, t, sizeof(t));
		u[i] ^= 0x40;
		CHECK_EQ(rt_token_check(&s, peer, u, sizeof(t), &why), want);
	}
	/* A certificate's name is another peer than any uid. */
	rt_token_peer(peer, sizeof(peer), true, 0, "collector-7");
	CHECK_STR(peer, "cert:collector-7");
	CHECK_EQ(rt_token_check(&s, peer, t, sizeof(t), &why), -EPERM);
	CHECK_EQ(rt_token_make(&s, peer, t), 0);
	CHECK_EQ(rt_token_check(&s, peer, t, sizeof(t), &why), 0);
}

int main(void)
{
	test_round_trip();
	return check_exit("test-token");
}
