/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * unacked: the JetStream stream sequences of messages ringtap collect has
 * written into its files but whose acknowledgment the server has not
 * confirmed. JetStream delivers such a message again (to this run after
 * AckWait, or to the next run of the same durable consumer); one found here
 * was written already and is acknowledged, not written twice. The set is
 * kept in a small text file beside the host files, one sequence a line,
 * saved before each batch is acknowledged. Pure: parsing and formatting
 * take buffers, the caller reads and writes the file.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rt_unacked {
	uint64_t *seqs;		/* sorted, each once */
	size_t n, cap;
};

void rt_unacked_release(struct rt_unacked *u);
int rt_unacked_add(struct rt_unacked *u, uint64_t seq);
bool rt_unacked_has(const struct rt_unacked *u, uint64_t seq);
void rt_unacked_remove(struct rt_unacked *u, uint64_t seq);
/* Forgets every sequence up to the consumer's ack floor: JetStream delivers none of them again. */
void rt_unacked_prune(struct rt_unacked *u, uint64_t ack_floor);

/* The file's text into the set: -EBADMSG for a line that is not a sequence number. */
int rt_unacked_parse(struct rt_unacked *u, const char *text, size_t len);
/* The set as the file's text, NUL-terminated; the caller frees *text. */
int rt_unacked_format(const struct rt_unacked *u, char **text, size_t *len);
