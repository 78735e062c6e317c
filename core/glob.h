/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * glob: what an event glob means, in one place. A glob is "system:event",
 * each side matched on its own (fnmatch: '*', '?', '[...]'), or a bare
 * "event", which matches that event name in every system. Every module that
 * turns globs into events (subscriptions, the configured events, NATS, a
 * certificate's allowed globs) asks rt_glob_match(), so one glob names the
 * same events everywhere. Pure.
 */
#include <stdbool.h>

bool rt_glob_match(const char *glob, const char *system, const char *name);
