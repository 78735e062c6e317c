/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * acl: which events a TLS client may subscribe to, decided by its
 * certificate's subject. The clients file (tls_clients) has a line per
 * client: the subject's common name, then comma-separated event globs
 *
 *	collector.example.org	sched:*,irq:*
 *	oncall-laptop		ringtap_test:ringtap_test
 *
 * '#' starts a comment. Globs take '*' only: with '?' or '[' a request's own
 * wildcards could reach past them (see rt_acl_allows_glob). A common name not
 * listed may subscribe to nothing. Pure: text in, answers out.
 */
#include <stdbool.h>
#include <stddef.h>

#include "why.h"

struct rt_acl;

/* Parses the file's text; -EINVAL with the 1-based line and the reason. */
int rt_acl_parse(struct rt_acl **out, const char *text, size_t len, unsigned int *line,
		 struct rt_why *why);
void rt_acl_free(struct rt_acl *acl);

/* The globs a common name is allowed, NULL-terminated; NULL when it is not listed. */
const char *const *rt_acl_lookup(const struct rt_acl *acl, const char *common_name);

/*
 * Whether every event the requested glob can match (as a subscription names
 * it: "system:event", or an event name alone in any system) is one the
 * allowed globs cover. Conservative: false when unsure.
 */
bool rt_acl_allows_glob(const char *const *allowed, const char *requested);
/* Whether one event is covered (glob.h's rt_glob_match with each allowed glob). */
bool rt_acl_allows_event(const char *const *allowed, const char *system, const char *name);
