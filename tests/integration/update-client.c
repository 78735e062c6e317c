// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * update-client: subscribes to ftrace:print, replaces that mid-stream with
 * the test event on CPU 0 (ringtap_update), says so by creating READY, then
 * counts what it receives until the daemon closes.
 *
 * usage: update-client SOCKET READY
 * prints: "print=N test=N test_cpu1=N lost=N"
 */
#include <stdio.h>
#include <string.h>

#include "ringtap.h"

int main(int argc, char **argv)
{
	static const char *const before[] = { "ftrace:print", NULL };
	static const char *const after[] = { "ringtap_test:ringtap_test", NULL };
	static const uint32_t cpu0 = 0;
	struct ringtap_client_opts opts = { .events = before, .client_name = "update-client" };
	struct ringtap_connect_error err;
	struct ringtap_client *c;
	struct ringtap_event ev;
	unsigned long print = 0, test = 0, test_cpu1 = 0, lost = 0;
	FILE *ready;

	if (argc != 3)
		return 2;
	opts.socket_path = argv[1];
	if (ringtap_connect(&c, &opts, &err)) {
		fprintf(stderr, "update-client: %s\n", err.text);
		return 1;
	}
	opts.events = after;
	opts.cpus = &cpu0;
	opts.n_cpus = 1;
	if (ringtap_update(c, &opts)) {
		fprintf(stderr, "update-client: update failed\n");
		return 1;
	}
	ready = fopen(argv[2], "w");
	if (ready)
		fclose(ready);
	while (ringtap_next(c, &ev, -1) == 1 && ev.kind != RINGTAP_END) {
		if (ev.kind == RINGTAP_LOST)
			lost += ev.lost->count;
		if (ev.kind != RINGTAP_RECORD)
			continue;
		if (!strcmp(ev.schema->name, "print"))
			print++;
		else if (!strcmp(ev.schema->name, "ringtap_test"))
			test++, test_cpu1 += ev.cpu == 1;
	}
	printf("print=%lu test=%lu test_cpu1=%lu lost=%lu\n", print, test, test_cpu1, lost);
	ringtap_close(c);
	return 0;
}
