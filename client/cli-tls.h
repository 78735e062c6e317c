/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * cli-tls: the command line's options for a daemon's TLS listener
 * (-s tls://HOST:PORT), the same in every command that connects.
 */
#include <getopt.h>
#include <stdbool.h>

#include "ringtap.h"

enum { CLI_OPT_CA = 0x200, CLI_OPT_CERT, CLI_OPT_KEY, CLI_OPT_SERVER_NAME };

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
