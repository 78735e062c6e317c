// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>

#include "fdstore.h"
#include "log.h"
#include "util.h"

#define SYSTEMD_DEST "org.freedesktop.systemd1"
/* PID 1 answers at once; a manager that does not is treated as "not a restart". */
#define BUS_TIMEOUT_USEC (2 * 1000000ULL)
#define BARRIER_TIMEOUT_USEC (5 * 1000000ULL)

bool rt_fdstore_available(void)
{
	const char *e = getenv("NOTIFY_SOCKET");

	return e && *e;
}

int rt_fdstore_note(struct rt_fdstore *fs, const char *name)
{
	char **n = realloc(fs->names, (fs->n_names + 1) * sizeof(*n));

	fs->active = true;
	if (!n)
		return -ENOMEM;
	fs->names = n;
	if (!(n[fs->n_names] = strdup(name)))
		return -ENOMEM;
	fs->n_names++;
	return 0;
}

/* One descriptor the store handed back: 1 when it is ours and kept, 0 when not ours. */
static int adopt(struct rt_fdstore *fs, const char *name, int fd)
{
	unsigned int n;
	int end = 0;

	if (!strcmp(name, "state") || !strcmp(name, "ring") || !strcmp(name, "crash") ||
	    !strcmp(name, "nats")) {
		int *slot = name[0] == 's' ? &fs->state_fd : name[0] == 'r' ? &fs->ring_fd :
			    name[0] == 'c' ? &fs->crash_fd : &fs->nats_fd;

		if (*slot >= 0)
			close(*slot);
		*slot = fd;
	} else if (sscanf(name, "cpu%u%n", &n, &end) == 1 && !name[end] && n < 65536) {
		if ((int)n >= fs->ncpu_fds) {
			int *c = realloc(fs->cpu_fds, (n + 1) * sizeof(*c));

			if (!c)
				return -ENOMEM;
			for (int i = fs->ncpu_fds; i <= (int)n; i++)
				c[i] = -1;
			fs->cpu_fds = c;
			fs->ncpu_fds = (int)n + 1;
		}
		if (fs->cpu_fds[n] >= 0)
			close(fs->cpu_fds[n]);
		fs->cpu_fds[n] = fd;
	} else if (sscanf(name, "conn%u%n", &n, &end) == 1 && !name[end]) {
		struct rt_fdstore_conn *c = realloc(fs->conns, (fs->n_conns + 1) * sizeof(*c));

		if (!c)
			return -ENOMEM;
		fs->conns = c;
		c[fs->n_conns++] = (struct rt_fdstore_conn){ n, fd };
	} else {
		return 0;
	}
	return rt_fdstore_note(fs, name) ?: 1;
}

/* The socket unit's descriptors, which come first, handed on to the listener as LISTEN_FDS. */
static void pass_on(unsigned int n, char **names)
{
	char num[24];
	_cleanup_free_ char *joined = NULL;
	size_t len = 1;

	if (!n)
		return;
	for (unsigned int i = 0; i < n; i++)
		len += strlen(names[i]) + 1;
	joined = calloc(1, len);
	for (unsigned int i = 0; joined && i < n; i++) {
		if (i)
			strcat(joined, ":");
		strcat(joined, names[i]);
	}
	snprintf(num, sizeof(num), "%d", (int)getpid());
	setenv("LISTEN_PID", num, 1);
	snprintf(num, sizeof(num), "%u", n);
	setenv("LISTEN_FDS", num, 1);
	if (joined)
		setenv("LISTEN_FDNAMES", joined, 1);
}

int rt_fdstore_collect(struct rt_fdstore *fs)
{
	char **names = NULL;
	unsigned int theirs = 0;
	bool ours_seen = false;
	int n, ret = 0;

	*fs = (struct rt_fdstore){ .active = true, .state_fd = -1, .ring_fd = -1,
				   .crash_fd = -1, .nats_fd = -1 };
	if (!getenv("LISTEN_FDNAMES"))
		return 0;
	n = sd_listen_fds_with_names(1, &names);
	if (n <= 0) {
		rt_strv_free(names);
		return n < 0 ? n : 0;
	}
	for (int i = 0; i < n; i++) {
		int fd = SD_LISTEN_FDS_START + i, r;

		r = ret ? 0 : adopt(fs, names && names[i] ? names[i] : "", fd);
		if (r < 0)
			ret = r;
		if (r > 0) {
			ours_seen = true;
		} else if (!ours_seen && !ret) {
			theirs++;
		} else {
			rt_log(LOG_WARNING, "systemd passed a descriptor named '%s' after the store's; "
			       "closed", names && names[i] ? names[i] : "?");
			close(fd);
		}
	}
	pass_on(theirs, names);
	rt_strv_free(names);
	if (ret)
		rt_log(LOG_ERR, "taking back what the fd store kept: %s", strerror(-ret));
	return ret;
}

bool rt_fdstore_any(const struct rt_fdstore *fs)
{
	return fs->n_names > 0;
}

int rt_fdstore_take_cpu(struct rt_fdstore *fs, int cpu)
{
	int fd;

	if (cpu < 0 || cpu >= fs->ncpu_fds)
		return -1;
	fd = fs->cpu_fds[cpu];
	fs->cpu_fds[cpu] = -1;
	return fd;
}

int rt_fdstore_take_ring(struct rt_fdstore *fs)
{
	int fd = fs->ring_fd;

	fs->ring_fd = -1;
	return fd;
}

int rt_fdstore_take_nats(struct rt_fdstore *fs)
{
	int fd = fs->nats_fd;

	fs->nats_fd = -1;
	return fd;
}

int rt_fdstore_take_conn(struct rt_fdstore *fs, uint32_t id)
{
	for (size_t i = 0; i < fs->n_conns; i++)
		if (fs->conns[i].id == id && fs->conns[i].fd >= 0) {
			int fd = fs->conns[i].fd;

			fs->conns[i].fd = -1;
			return fd;
		}
	return -1;
}

void rt_fdstore_release(struct rt_fdstore *fs)
{
	bool told = false;

	if (!fs->active)
		return;
	for (size_t i = 0; i < fs->n_names; i++) {
		char msg[300];

		snprintf(msg, sizeof(msg), "FDSTOREREMOVE=1\nFDNAME=%s", fs->names[i]);
		told |= sd_notify(0, msg) > 0;
		free(fs->names[i]);
	}
	free(fs->names);
	for (int i = 0; i < fs->ncpu_fds; i++)
		if (fs->cpu_fds[i] >= 0)
			close(fs->cpu_fds[i]);
	free(fs->cpu_fds);
	for (size_t i = 0; i < fs->n_conns; i++)
		if (fs->conns[i].fd >= 0)
			close(fs->conns[i].fd);
	free(fs->conns);
	if (fs->state_fd >= 0)
		close(fs->state_fd);
	if (fs->ring_fd >= 0)
		close(fs->ring_fd);
	if (fs->crash_fd >= 0)
		close(fs->crash_fd);
	if (fs->nats_fd >= 0)
		close(fs->nats_fd);
	*fs = (struct rt_fdstore){ .state_fd = -1, .ring_fd = -1, .crash_fd = -1,
				   .nats_fd = -1 };
	if (told && rt_fdstore_barrier())
		rt_log(LOG_WARNING, "systemd did not confirm the fd store was emptied");
}

void rt_fdstore_forget(struct rt_fdstore *fs)
{
	for (size_t i = 0; i < fs->n_names; i++)
		free(fs->names[i]);
	free(fs->names);
	fs->names = NULL;
	fs->n_names = 0;
	fs->active = false;
}

int rt_fdstore_put(const char *name, int fd, bool no_poll)
{
	char msg[300];
	int ret;

	snprintf(msg, sizeof(msg), "FDSTORE=1\nFDNAME=%s%s", name, no_poll ? "\nFDPOLL=0" : "");
	ret = sd_pid_notify_with_fds(0, 0, msg, &fd, 1);
	return ret < 0 ? ret : ret == 0 ? -ENOTCONN : 0;
}

int rt_fdstore_barrier(void)
{
	int ret = sd_notify_barrier(0, BARRIER_TIMEOUT_USEC);

	return ret < 0 ? ret : 0;
}

/*
 * PID 1's own socket (as systemctl uses it as root): the guest, like many
 * servers, may run no D-Bus daemon; the system bus is the fallback.
 */
static int open_manager_bus(sd_bus **out)
{
	sd_bus *bus = NULL;
	int ret = sd_bus_new(&bus);

	if (ret >= 0 && (ret = sd_bus_set_address(bus, "unix:path=/run/systemd/private")) >= 0)
		ret = sd_bus_start(bus);
	if (ret < 0) {
		sd_bus_unref(bus);
		bus = NULL;
		ret = sd_bus_open_system(&bus);
	}
	if (ret >= 0)
		ret = sd_bus_set_method_call_timeout(bus, BUS_TIMEOUT_USEC);
	if (ret < 0) {
		sd_bus_unref(bus);
		return ret;
	}
	*out = bus;
	return 0;
}

int rt_fdstore_restarting(void)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *unit = NULL, *job = NULL;
	_cleanup_free_ char *type = NULL;
	const char *unit_path, *job_path;
	sd_bus *bus = NULL;
	uint32_t job_id = 0;
	int ret = open_manager_bus(&bus);

	if (ret < 0)
		return ret;
	ret = sd_bus_call_method(bus, SYSTEMD_DEST, "/org/freedesktop/systemd1",
				 "org.freedesktop.systemd1.Manager", "GetUnitByPID", &err, &unit,
				 "u", (uint32_t)getpid());
	if (ret >= 0)
		ret = sd_bus_message_read(unit, "o", &unit_path);
	if (ret >= 0)
		ret = sd_bus_get_property(bus, SYSTEMD_DEST, unit_path, "org.freedesktop.systemd1.Unit",
					  "Job", &err, &job, "(uo)");
	if (ret >= 0)
		ret = sd_bus_message_read(job, "(uo)", &job_id, &job_path);
	if (ret >= 0 && job_id)
		ret = sd_bus_get_property_string(bus, SYSTEMD_DEST, job_path,
						 "org.freedesktop.systemd1.Job", "JobType", &err,
						 &type);
	if (ret < 0 && sd_bus_error_is_set(&err))
		rt_log(LOG_WARNING, "asking systemd what stops us: %s", err.message ?: err.name);
	sd_bus_error_free(&err);
	sd_bus_message_unref(unit);
	sd_bus_message_unref(job);
	sd_bus_flush_close_unref(bus);
	if (ret < 0)
		return ret;
	/* try-restart and reload-or-restart become restart jobs on an active unit. */
	return job_id && type && !strcmp(type, "restart");
}
