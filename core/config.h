/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * config: ringtapd's settings, from /etc/ringtap/ringtapd.conf ("key = value"
 * lines, '#' comments) and the command line, which overrides the file. Each
 * key knows its default and whether a reload (SIGHUP) can apply it to a
 * running daemon without dropping subscribers. Pure: text in, values out.
 */
#include <stdbool.h>
#include <stddef.h>

#include "why.h"
#include <stdint.h>
#include <stdio.h>

#define RT_CONFIG_DEFAULT_PATH "/etc/ringtap/ringtapd.conf"
/* What ringtapd --stdout enables when no events are set. */
#define RT_CONFIG_STDOUT_EVENTS "ringtap_test:*"
/* ring_pages = 0: the page ring holds this many kernel buffers per CPU. */
#define RT_CONFIG_RING_BUFFERS 4
/* ring_pages = 0 where the kernel's buffer size is not known (a tree without buffer_size_kb). */
#define RT_CONFIG_RING_PAGES_UNKNOWN 1024

enum rt_config_key {
	RT_CONF_SOCKET,
	RT_CONF_GROUP,
	RT_CONF_EVENTS,
	RT_CONF_INSTANCE,
	RT_CONF_TRACE_SELF,
	RT_CONF_KERNEL_SELECTION,
	RT_CONF_CLOCK,
	RT_CONF_BUFFER_KB,
	RT_CONF_MAX_QUEUE_KB,
	RT_CONF_MAX_CLIENTS,
	RT_CONF_MAX_CLIENTS_PER_PEER,
	RT_CONF_MAX_PENDING_PER_PEER,
	RT_CONF_MAX_EVENTS,
	RT_CONF_DRAIN_MS,
	RT_CONF_MAX_LATENCY_MS,
	RT_CONF_WAKE_PERCENT,
	RT_CONF_MAX_PAGES,
	RT_CONF_RING_PAGES,
	RT_CONF_STATUS_SEC,
	RT_CONF_LISTEN_TCP,
	RT_CONF_TLS_CERT,
	RT_CONF_TLS_KEY,
	RT_CONF_TLS_CA,
	RT_CONF_TLS_CLIENTS,
	RT_CONF_TCP_INSECURE,
	RT_CONF_NATS_URL,
	RT_CONF_NATS_EVENTS,
	RT_CONF_NATS_STREAM,
	RT_CONF_NATS_MAX_PENDING,
	RT_CONF_NATS_MAX_MESSAGE_KB,
	RT_CONF_N_KEYS
};

struct rt_config {
	char *str[RT_CONF_N_KEYS];		/* string keys; NULL: unset */
	unsigned long num[RT_CONF_N_KEYS];	/* number keys */
	uint32_t given;				/* bit per key set explicitly */
};

/* Fills every key with its default. */
void rt_config_defaults(struct rt_config *cfg);
void rt_config_release(struct rt_config *cfg);

/* Looks a key up by its name in the file ("max_clients") or as a long option ("max-clients"). */
int rt_config_key_by_name(const char *name, size_t len);
const char *rt_config_key_name(enum rt_config_key key);
bool rt_config_key_reloadable(enum rt_config_key key);

/* A key's default from the table: a string key's (NULL: unset), a number key's. */
const char *rt_config_default_str(enum rt_config_key key);
unsigned long rt_config_default_num(enum rt_config_key key);

/* A number key's largest value. */
unsigned long rt_config_key_max(enum rt_config_key key);

/*
 * A whole decimal number from min to max, as every number key is read: no
 * sign, blank or suffix. -EINVAL with *why ("not a number", "out of range
 * (MIN to MAX)") otherwise.
 */
int rt_config_number(const char *text, unsigned long min, unsigned long max, unsigned long *out,
		     struct rt_why *why);

/* Sets one key from its text; -EINVAL with *why for a value out of range. */
int rt_config_set(struct rt_config *cfg, enum rt_config_key key, const char *value,
		  struct rt_why *why);

/*
 * Parses a whole file's text into cfg. On error returns -EINVAL with the
 * 1-based line number and the reason.
 */
int rt_config_parse(struct rt_config *cfg, const char *text, size_t len, unsigned int *line,
		    struct rt_why *why);

/* Copies every key given in src into dst (the command line over the file). */
int rt_config_merge(struct rt_config *dst, const struct rt_config *src);

/* A string key's value, its default when not given; NULL when unset. */
const char *rt_config_str(const struct rt_config *cfg, enum rt_config_key key);

/* The value as the file would spell it, into buf. */
const char *rt_config_value(const struct rt_config *cfg, enum rt_config_key key, char *buf,
			    size_t size);
bool rt_config_equal(const struct rt_config *a, const struct rt_config *b, enum rt_config_key key);

/* Every key = value, one per line, as a config file ringtapd reads back. */
void rt_config_write(const struct rt_config *cfg, FILE *out);
