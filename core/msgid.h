/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * msgid: the Nats-Msg-Id of a message ringtapd publishes (docs/PROTOCOL.md,
 * "Message ids"), from which JetStream stores a message published twice
 * (a retry after a timeout, a reconnect, a failover) once. The same
 * message must always get the same id and different messages different
 * ids, so it is built only from what names the message: the host, its
 * boot, the daemon run that numbered it, the CPU and the number.
 */
#include <stddef.h>
#include <stdint.h>

enum rt_msg_id_kind {
	RT_MSG_ID_RECORDS = 'r',	/* seq: the CPU's number of the first record */
	RT_MSG_ID_CONTROL = 'c',	/* seq: the run's count of Welcome, Schema and QUEUE Lost */
	RT_MSG_ID_KERNEL = 'k',		/* seq: the CPU's count of KERNEL Lost messages */
};

struct rt_msg_id {
	const char *host;	/* the subject token */
	const char *boot_id;
	uint64_t session;	/* the run that numbered seq */
	unsigned int cpu;
	enum rt_msg_id_kind kind;
	uint64_t seq;
};

/* The id into buf, NUL-terminated: its length, or -ENOSPC (buf then holds ""). */
int rt_msg_id_format(char *buf, size_t size, const struct rt_msg_id *id);
