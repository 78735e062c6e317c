// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The key table is the one place a setting is described: its name, its
 * default, its range and whether a running daemon can take a new value.
 * ringtapd.conf(5) documents the same table.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "select.h"

struct key_desc {
	const char *name;
	bool is_string;
	bool reloadable;
	const char *def_str;	/* NULL: unset (the kernel's or the daemon's choice) */
	unsigned long def_num, min, max;
};

static const struct key_desc keys[RT_CONF_N_KEYS] = {
	[RT_CONF_SOCKET] = { "socket", true, false, "/run/ringtap/ringtapd.sock" },
	[RT_CONF_GROUP] = { "group", true, false, "ringtap" },
	[RT_CONF_EVENTS] = { "events", true, true, NULL },
	[RT_CONF_INSTANCE] = { "instance", true, false, "ringtap" },
	[RT_CONF_TRACE_SELF] = { "trace_self", false, false, NULL, 0, 0, 1 },
	[RT_CONF_KERNEL_SELECTION] = { "kernel_selection", false, false, NULL, 1, 0, 1 },
	[RT_CONF_CLOCK] = { "clock", true, false, NULL },
	[RT_CONF_BUFFER_KB] = { "buffer_kb", false, true, NULL, 0, 0, 1UL << 22 },
	[RT_CONF_MAX_QUEUE_KB] = { "max_queue_kb", false, true, NULL, 4096, 64, 1UL << 20 },
	[RT_CONF_MAX_CLIENTS] = { "max_clients", false, true, NULL, 64, 1, 4096 },
	[RT_CONF_MAX_CLIENTS_PER_PEER] = { "max_clients_per_peer", false, true, NULL, 0, 0, 4096 },
	[RT_CONF_MAX_PENDING_PER_PEER] = { "max_pending_per_peer", false, true, NULL, 8, 1, 4096 },
	[RT_CONF_MAX_EVENTS] = { "max_events", false, true, NULL, 1024, 1, 1UL << 16 },
	[RT_CONF_DRAIN_MS] = { "drain_ms", false, true, NULL, 0, 0, 10000 },
	[RT_CONF_MAX_LATENCY_MS] = { "max_latency_ms", false, true, NULL, 100, RT_LATENCY_MIN_MS,
				     RT_LATENCY_MAX_MS },
	[RT_CONF_WAKE_PERCENT] = { "wake_percent", false, true, NULL, 50, 1, 100 },
	[RT_CONF_MAX_PAGES] = { "max_pages", false, true, NULL, 256, 1, 1UL << 16 },
	/* 0: RT_CONFIG_RING_BUFFERS times the kernel's buffer, in pages. */
	[RT_CONF_RING_PAGES] = { "ring_pages", false, false, NULL, 0, 0, 1UL << 20 },
	[RT_CONF_STATUS_SEC] = { "status_sec", false, true, NULL, 5, 0, 3600 },
	[RT_CONF_LISTEN_TCP] = { "listen_tcp", true, false, NULL },
	[RT_CONF_TLS_CERT] = { "tls_cert", true, false, "/etc/ringtap/tls/server.crt" },
	[RT_CONF_TLS_KEY] = { "tls_key", true, false, "/etc/ringtap/tls/server.key" },
	[RT_CONF_TLS_CA] = { "tls_ca", true, false, "/etc/ringtap/tls/ca.crt" },
	[RT_CONF_TLS_CLIENTS] = { "tls_clients", true, false, "/etc/ringtap/clients" },
	[RT_CONF_TCP_INSECURE] = { "tcp_insecure", false, false, NULL, 0, 0, 1 },
	[RT_CONF_NATS_URL] = { "nats_url", true, false, NULL },
	[RT_CONF_NATS_EVENTS] = { "nats_events", true, false, NULL },
	[RT_CONF_NATS_STREAM] = { "nats_stream", true, false, "RINGTAP" },
	[RT_CONF_NATS_MAX_PENDING] = { "nats_max_pending", false, false, NULL, 4096, 1, 1UL << 20 },
	/* 0: a page a message; else a drain's pages of a CPU held up to this (publish.h). */
	[RT_CONF_NATS_MAX_MESSAGE_KB] = { "nats_max_message_kb", false, false, NULL, 0, 0, 1024 },
};

void rt_config_defaults(struct rt_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	for (int k = 0; k < RT_CONF_N_KEYS; k++)
		cfg->num[k] = keys[k].def_num;
}

void rt_config_release(struct rt_config *cfg)
{
	for (int k = 0; k < RT_CONF_N_KEYS; k++)
		free(cfg->str[k]);
	memset(cfg, 0, sizeof(*cfg));
}

int rt_config_key_by_name(const char *name, size_t len)
{
	for (int k = 0; k < RT_CONF_N_KEYS; k++) {
		const char *kn = keys[k].name;
		size_t i;

		if (strlen(kn) != len)
			continue;
		for (i = 0; i < len; i++)
			if (name[i] != kn[i] && !(name[i] == '-' && kn[i] == '_'))
				break;
		if (i == len)
			return k;
	}
	return -ENOENT;
}

const char *rt_config_key_name(enum rt_config_key key)
{
	return key < RT_CONF_N_KEYS ? keys[key].name : "?";
}

bool rt_config_key_reloadable(enum rt_config_key key)
{
	return key < RT_CONF_N_KEYS && keys[key].reloadable;
}

const char *rt_config_default_str(enum rt_config_key key)
{
	return key < RT_CONF_N_KEYS ? keys[key].def_str : NULL;
}

unsigned long rt_config_default_num(enum rt_config_key key)
{
	return key < RT_CONF_N_KEYS ? keys[key].def_num : 0;
}

unsigned long rt_config_key_max(enum rt_config_key key)
{
	return key < RT_CONF_N_KEYS ? keys[key].max : 0;
}

int rt_config_number(const char *text, unsigned long min, unsigned long max, unsigned long *out,
		     struct rt_why *why)
{
	unsigned long v;
	char *end;

	/* strtoul alone would take blanks, a sign (and negate) and a tail. */
	if (*text < '0' || *text > '9')
		return rt_why_set(why, -EINVAL, "not a number");
	errno = 0;
	v = strtoul(text, &end, 10);
	if (*end)
		return rt_why_set(why, -EINVAL, "not a number");
	if (errno || v < min || v > max)
		return rt_why_set(why, -EINVAL, "out of range (%lu to %lu)", min, max);
	*out = v;
	return 0;
}

int rt_config_set(struct rt_config *cfg, enum rt_config_key key, const char *value,
		  struct rt_why *why)
{
	const struct key_desc *d;
	unsigned long v;
	int ret;

	if (key >= RT_CONF_N_KEYS)
		return rt_why_set(why, -EINVAL, "unknown key");
	d = &keys[key];
	if (d->is_string) {
		char *copy;

		if (!*value)
			return rt_why_set(why, -EINVAL, "empty value");
		copy = strdup(value);
		if (!copy)
			return -ENOMEM;
		free(cfg->str[key]);
		cfg->str[key] = copy;
		cfg->given |= 1u << key;
		return 0;
	}
	ret = rt_config_number(value, d->min, d->max, &v, why);
	if (ret)
		return ret;
	cfg->num[key] = v;
	cfg->given |= 1u << key;
	return 0;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

int rt_config_parse(struct rt_config *cfg, const char *text, size_t len, unsigned int *line,
		    struct rt_why *why)
{
	const char *p = text, *end = text + len;
	char value[PATH_MAX];

	*line = 0;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *k, *kend, *v, *vend;
		int key, ret;

		if (!eol)
			eol = end;
		++*line;
		k = p;
		p = eol + (eol < end);
		while (k < eol && is_blank(*k))
			k++;
		if (k == eol || *k == '#')
			continue;
		kend = k;
		while (kend < eol && !is_blank(*kend) && *kend != '=')
			kend++;
		v = kend;
		while (v < eol && is_blank(*v))
			v++;
		if (v == eol || *v != '=') {
			return rt_why_set(why, -EINVAL, "expected \"key = value\"");
		}
		v++;
		while (v < eol && is_blank(*v))
			v++;
		vend = eol;
		while (vend > v && is_blank(vend[-1]))
			vend--;
		key = rt_config_key_by_name(k, (size_t)(kend - k));
		if (key < 0 || memchr(k, '-', (size_t)(kend - k)))
			return rt_why_set(why, -EINVAL, "unknown key '%.*s'", (int)(kend - k), k);
		if ((size_t)(vend - v) >= sizeof(value) || memchr(v, '\0', (size_t)(vend - v))) {
			return rt_why_set(why, -EINVAL, "%s: value too long or not text",
					  keys[key].name);
		}
		memcpy(value, v, (size_t)(vend - v));
		value[vend - v] = '\0';
		ret = rt_config_set(cfg, (enum rt_config_key)key, value, why);
		if (ret && why) {
			/* The line's key and value before the reason, which is why's text. */
			char reason[sizeof(why->text)];

			memcpy(reason, why->text, sizeof(reason));
			rt_why_set(why, ret, "%s%s%s: %s", keys[key].name, *value ? " = " : "",
				   value, reason);
		}
		if (ret)
			return ret;
	}
	return 0;
}

int rt_config_merge(struct rt_config *dst, const struct rt_config *src)
{
	for (int k = 0; k < RT_CONF_N_KEYS; k++) {
		if (!(src->given & (1u << k)))
			continue;
		if (keys[k].is_string) {
			char *copy = src->str[k] ? strdup(src->str[k]) : NULL;

			if (src->str[k] && !copy)
				return -ENOMEM;
			free(dst->str[k]);
			dst->str[k] = copy;
		} else {
			dst->num[k] = src->num[k];
		}
		dst->given |= 1u << k;
	}
	return 0;
}

const char *rt_config_value(const struct rt_config *cfg, enum rt_config_key key, char *buf,
			    size_t size)
{
	if (key >= RT_CONF_N_KEYS)
		return "";
	if (keys[key].is_string) {
		const char *s = cfg->str[key] ? cfg->str[key] : keys[key].def_str;

		return s ? s : "";
	}
	snprintf(buf, size, "%lu", cfg->num[key]);
	return buf;
}

bool rt_config_equal(const struct rt_config *a, const struct rt_config *b, enum rt_config_key key)
{
	char ba[32], bb[32];

	return !strcmp(rt_config_value(a, key, ba, sizeof(ba)), rt_config_value(b, key, bb, sizeof(bb)));
}

void rt_config_write(const struct rt_config *cfg, FILE *out)
{
	char buf[32];

	for (int k = 0; k < RT_CONF_N_KEYS; k++) {
		const char *v = rt_config_value(cfg, (enum rt_config_key)k, buf, sizeof(buf));

		if (*v)
			fprintf(out, "%s = %s\n", keys[k].name, v);
		else
			fprintf(out, "# %s unset\n", keys[k].name);
	}
}

const char *rt_config_str(const struct rt_config *cfg, enum rt_config_key key)
{
	if (key >= RT_CONF_N_KEYS || !keys[key].is_string)
		return NULL;
	return cfg->str[key] ? cfg->str[key] : rt_config_default_str(key);
}
