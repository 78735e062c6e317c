/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * cli-tls: the command line's options for a daemon's TLS listener
 * (-s tls://HOST:PORT), the same in every command that connects, the
 * latency bound and the transport that stream and record ask, and the one line every command
 * says about an option getopt did not take.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringtap.h"

/*
 * The exit status of stream and record when the connection ended without
 * ringtapd's Bye (it was killed, the network cut): the output may lack its
 * end, which a script must be able to tell from 0 (ended as asked) and 1
 * (an error said on stderr).
 */
#define CLI_EXIT_CUT 3

enum { CLI_OPT_CA = 0x200, CLI_OPT_CERT, CLI_OPT_KEY, CLI_OPT_SERVER_NAME, CLI_OPT_MAX_LATENCY,
       CLI_OPT_TRANSPORT };

#define CLI_TLS_LONGOPTS                                                      \
	{ "ca", required_argument, NULL, CLI_OPT_CA },                        \
	{ "cert", required_argument, NULL, CLI_OPT_CERT },                    \
	{ "key", required_argument, NULL, CLI_OPT_KEY },                      \
	{ "server-name", required_argument, NULL, CLI_OPT_SERVER_NAME }

#define CLI_TLS_HELP                                                                   \
	"      --ca=FILE         with -s tls://: the CA the daemon's certificate is\n"  \
	"                        signed by (default: the system's)\n"                   \
	"      --cert=FILE, --key=FILE\n"                                               \
	"                        this client's certificate and key, PEM\n"              \
	"      --server-name=NAME the name the daemon's certificate must carry\n"       \
	"                        (default: the host in -s)\n"

/* --max-latency=MS, in stream and record: ringtapd says what it accepts. */
#define CLI_LATENCY_HELP                                                               \
	"      --max-latency=MS  records may reach us this late (10-60000; default:\n"   \
	"                        ringtapd's max_latency_ms): a longer bound lets it wake\n" \
	"                        less often\n"

/* --transport=auto|ring|socket, in stream and record: the output is the same. */
#define CLI_TRANSPORT_HELP                                                             \
	"      --transport=HOW   ring: map ringtapd's page ring and decode here (a local\n" \
	"                        socket, a peer allowed every event); socket: records\n"  \
	"                        or pages over the socket; auto (default): the ring\n"    \
	"                        when ringtapd serves it to us, the socket otherwise\n"

/* --transport's value in *t; false for anything else. */
static inline bool cli_transport(const char *arg, enum ringtap_transport *t)
{
	if (!strcmp(arg, "auto"))
		*t = RINGTAP_TRANSPORT_RING_OR_SOCKET;
	else if (!strcmp(arg, "ring"))
		*t = RINGTAP_TRANSPORT_RING;
	else if (!strcmp(arg, "socket"))
		*t = RINGTAP_TRANSPORT_SOCKET;
	else
		return false;
	return true;
}

/* A positive number of milliseconds in *ms; false for anything else. */
static inline bool cli_latency(const char *arg, unsigned int *ms)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || !v || v > UINT_MAX)
		return false;
	*ms = (unsigned int)v;
	return true;
}

/* True when opt was one of CLI_TLS_LONGOPTS (and is now in o). */
static inline bool cli_tls_option(int opt, const char *arg, struct ringtap_client_opts *o)
{
	switch (opt) {
	case CLI_OPT_CA:
		o->tls_ca = arg;
		return true;
	case CLI_OPT_CERT:
		o->tls_cert = arg;
		return true;
	case CLI_OPT_KEY:
		o->tls_key = arg;
		return true;
	case CLI_OPT_SERVER_NAME:
		o->tls_server_name = arg;
		return true;
	}
	return false;
}

/* getopt (opterr off, optstring starting with ':') returned c, '?' or ':': says which option. */
static inline void cli_bad_option(const char *cmd, char **argv, int c)
{
	if (c == ':')
		fprintf(stderr, "ringtap %s: option %s needs a value (see ringtap %s --help)\n",
			cmd, argv[optind - 1], cmd);
	else
		fprintf(stderr, "ringtap %s: unknown option %s (see ringtap %s --help)\n", cmd,
			argv[optind - 1], cmd);
}

/* A number of seconds (over 0, at most 1e9), or one line naming the option and the value. */
static inline bool cli_seconds(const char *cmd, const char *opt, const char *arg, double *out)
{
	char *end;
	double v = strtod(arg, &end);

	if (*end || !*arg || !isfinite(v) || v <= 0 || v > 1e9) {
		fprintf(stderr, "ringtap %s: %s wants seconds, not '%s'\n", cmd, opt, arg);
		return false;
	}
	*out = v;
	return true;
}
