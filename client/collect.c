// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ringtap collect -H HOSTS -o DIR: records many daemons at once, a trace.dat
 * per host and boot. Each host gets its own `ringtap record --reconnect`
 * process, so one host's stall or crash touches no other; this process
 * starts them, reads their progress, and starts a host again with backoff
 * when its daemon cannot be reached or another boot answers (a rebooted
 * host: its clock and formats start over, so it gets a new file).
 *
 *   DIR/NAME.dat, DIR/NAME.1.dat, ...   one per boot (trace-cmd report reads each)
 *   DIR/NAME.clock                      boots and (trace clock, realtime) pairs
 *   DIR/NAME.log                        the recorder's messages, with the gaps
 *
 * A status line per host every --status-sec: up or down, events/s, events
 * and losses so far.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli-tls.h"
#include "collect.h"

#define MAX_HOSTS 256
#define BACKOFF_MIN_MS 250
#define BACKOFF_MAX_MS 5000

struct host {
	char name[64];
	char address[256];
	char server_name[256];
	pid_t pid;			/* its recorder; 0: none running */
	int err_fd;			/* the recorder's standard error */
	char line[512];			/* a partial progress line */
	size_t line_len;
	unsigned int segment;		/* file number: a new one per boot */
	char path[PATH_MAX];
	uint64_t events, lost;		/* of the running recorder */
	uint64_t done_events, done_lost;	/* of the recorders before */
	uint64_t events_at_status;
	unsigned int backoff_ms;
	double start_at;		/* when to start the next recorder */
	unsigned int starts, boots;
	bool up;			/* its recorder has reported progress */
};

struct collect {
	struct host hosts[MAX_HOSTS];
	unsigned int n_hosts;
	const char *dir;
	const char *events;
	const char *ca, *cert, *key;
	double duration;
	double status_sec;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
	fputs("Usage: ringtap collect -H HOSTS -o DIR [OPTIONS]\n"
	      "Records every daemon HOSTS lists, each into DIR/NAME.dat (a new file per\n"
	      "boot: NAME.1.dat, ...), with DIR/NAME.clock (boot ids and trace clock vs\n"
	      "realtime pairs, to align hosts) and DIR/NAME.log. Reconnects with backoff;\n"
	      "prints a status line per host. Stops on Ctrl-C, SIGTERM or --duration.\n"
	      "HOSTS: a line per host, NAME ADDRESS [SERVER_NAME], '#' comments; ADDRESS\n"
	      "is tls://HOST:PORT, tcp://HOST:PORT or a Unix socket path.\n\n"
	      "  -H, --hosts=FILE       the hosts file (required)\n"
	      "  -o, --output=DIR       where the files go (required; created)\n"
	      "  -e, --events=LIST      comma-separated system:event globs (default ringtap_test:*)\n"
	      "  -d, --duration=SEC     stop after SEC seconds\n"
	      "      --status-sec=SEC   status line period (default 5; 0: none)\n"
	      CLI_TLS_HELP
	      "  -h, --help             this text\n",
	      f);
}

static int read_hosts(struct collect *col, const char *path)
{
	char line[1024];
	unsigned int n = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		fprintf(stderr, "ringtap collect: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct host *h;
		char name[256], address[256], server[256] = "";
		char *hash = strchr(line, '#');
		int got;

		n++;
		if (!strchr(line, '\n') && !feof(f)) {
			fprintf(stderr, "ringtap collect: %s:%u: line too long\n", path, n);
			fclose(f);
			return -1;
		}
		if (hash)
			*hash = '\0';
		got = sscanf(line, "%255s %255s %255s", name, address, server);
		if (got <= 0)
			continue;
		if (got < 2 || strchr(name, '/') || name[0] == '.' || strlen(name) >= 64) {
			fprintf(stderr, "ringtap collect: %s:%u: want NAME ADDRESS [SERVER_NAME] "
				"(a NAME of at most 63 characters, without '/')\n", path, n);
			fclose(f);
			return -1;
		}
		if (col->n_hosts == MAX_HOSTS) {
			fprintf(stderr, "ringtap collect: %s: more than %d hosts\n", path, MAX_HOSTS);
			fclose(f);
			return -1;
		}
		for (unsigned int i = 0; i < col->n_hosts; i++)
			if (!strcmp(col->hosts[i].name, name)) {
				fprintf(stderr, "ringtap collect: %s:%u: %s listed twice\n", path, n,
					name);
				fclose(f);
				return -1;
			}
		h = &col->hosts[col->n_hosts++];
		snprintf(h->name, sizeof(h->name), "%s", name);
		snprintf(h->address, sizeof(h->address), "%s", address);
		snprintf(h->server_name, sizeof(h->server_name), "%s", server);
		h->err_fd = -1;
		h->backoff_ms = BACKOFF_MIN_MS;
	}
	fclose(f);
	if (!col->n_hosts) {
		fprintf(stderr, "ringtap collect: %s lists no host\n", path);
		return -1;
	}
	return 0;
}

static void host_path(const struct collect *col, struct host *h)
{
	char path[PATH_MAX];

	if (h->segment)
		snprintf(path, sizeof(path), "%s/%s.%u.dat", col->dir, h->name, h->segment);
	else
		snprintf(path, sizeof(path), "%s/%s.dat", col->dir, h->name);
	memcpy(h->path, path, sizeof(path));
}

/* DIR/NAME.SUFFIX, into buf (PATH_MAX bytes). */
static const char *host_file(const struct collect *col, const struct host *h, const char *suffix,
			     char *buf)
{
	snprintf(buf, PATH_MAX, "%s/%s.%s", col->dir, h->name, suffix);
	return buf;
}

/* A recorder for h: `ringtap record` with its standard error on a pipe to us. */
static int start_recorder(struct collect *col, struct host *h, double t0)
{
	char clock_path[PATH_MAX], dur[32];
	const char *argv[32];
	int n = 0, pipefd[2];
	pid_t pid;

	host_path(col, h);
	host_file(col, h, "clock", clock_path);
	argv[n++] = "ringtap";
	argv[n++] = "record";
	argv[n++] = "--reconnect";
	/* Its standard error is our pipe, no terminal: the lines are asked for. */
	argv[n++] = "--progress";
	argv[n++] = "-o";
	argv[n++] = h->path;
	argv[n++] = "-s";
	argv[n++] = h->address;
	argv[n++] = "-e";
	argv[n++] = col->events;
	argv[n++] = "--clock-file";
	argv[n++] = clock_path;
	if (col->duration) {
		double left = col->duration - (now_s() - t0);

		snprintf(dur, sizeof(dur), "%.3f", left > 0.1 ? left : 0.1);
		argv[n++] = "-d";
		argv[n++] = dur;
	}
	if (col->ca) {
		argv[n++] = "--ca";
		argv[n++] = col->ca;
	}
	if (col->cert) {
		argv[n++] = "--cert";
		argv[n++] = col->cert;
	}
	if (col->key) {
		argv[n++] = "--key";
		argv[n++] = col->key;
	}
	if (h->server_name[0]) {
		argv[n++] = "--server-name";
		argv[n++] = h->server_name;
	}
	argv[n] = NULL;
	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -errno;
	}
	if (pid == 0) {
		dup2(pipefd[1], STDERR_FILENO);
		/* Its own group's Ctrl-C reaches it too: record stops as it would alone. */
		execv("/proc/self/exe", (char **)argv);
		fprintf(stderr, "ringtap collect: cannot run the recorder: %s\n", strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);
	fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
	h->pid = pid;
	h->err_fd = pipefd[0];
	h->events = h->lost = 0;
	h->line_len = 0;
	h->starts++;
	return 0;
}

static void log_to(const struct collect *col, const struct host *h, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void log_to(const struct collect *col, const struct host *h, const char *fmt, ...)
{
	char log_path[PATH_MAX];
	FILE *log;
	va_list ap;

	log = fopen(host_file(col, h, "log", log_path), "ae");
	if (!log)
		return;
	va_start(ap, fmt);
	vfprintf(log, fmt, ap);
	va_end(ap);
	fputc('\n', log);
	fclose(log);
}

/* One line of the recorder's: progress updates the counts, the rest goes to the log. */
static void recorder_line(struct collect *col, struct host *h, char *line)
{
	uint64_t events, pages, bytes, lost;

	if (sscanf(line, "ringtap record: %" SCNu64 " events, %" SCNu64 " pages, %" SCNu64
		   " bytes, %" SCNu64 " lost", &events, &pages, &bytes, &lost) == 4) {
		h->events = events;
		h->lost = lost;
		if (!h->up) {
			h->up = true;
			h->backoff_ms = BACKOFF_MIN_MS;
		}
		return;
	}
	if (!*line)
		return;
	log_to(col, h, "%s", line);
	if (strstr(line, "went away"))
		h->up = false;
	if (strstr(line, "reconnected"))
		h->up = true;
}

static void read_recorder(struct collect *col, struct host *h)
{
	for (;;) {
		ssize_t n = read(h->err_fd, h->line + h->line_len, sizeof(h->line) - 1 - h->line_len);
		char *nl;

		if (n <= 0)
			return;
		h->line_len += (size_t)n;
		h->line[h->line_len] = '\0';
		while ((nl = memchr(h->line, '\n', h->line_len))) {
			*nl = '\0';
			recorder_line(col, h, h->line);
			h->line_len -= (size_t)(nl + 1 - h->line);
			memmove(h->line, nl + 1, h->line_len);
		}
		if (h->line_len == sizeof(h->line) - 1)
			h->line_len = 0;	/* a line that long is not progress */
	}
}

/*
 * Its recorder ended: with no file (the daemon was not reachable or never
 * streamed: the recorder writes the file only then) or an empty one, the
 * same file is tried again later; a file with pages stays, and the next
 * boot gets the next file.
 */
static void recorder_ended(struct collect *col, struct host *h, int status, double t,
			   bool stopping)
{
	struct stat st;

	read_recorder(col, h);
	close(h->err_fd);
	h->err_fd = -1;
	h->pid = 0;
	h->up = false;
	if (!stat(h->path, &st) && st.st_size == 0) {
		unlink(h->path);
	} else if (h->events || !stat(h->path, &st)) {
		h->done_events += h->events;
		h->done_lost += h->lost;
		h->events = h->lost = 0;
		h->segment++;
		h->boots++;
		h->backoff_ms = BACKOFF_MIN_MS;
		if (!stopping)
			log_to(col, h, "ringtap collect: %s closed (recorder exit %d); what the "
			       "host traces until the next file starts is not recorded", h->path,
			       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	}
	h->start_at = t + h->backoff_ms / 1000.0;
	if (h->backoff_ms < BACKOFF_MAX_MS)
		h->backoff_ms *= 2;
}

static void status(struct collect *col, double period)
{
	for (unsigned int i = 0; i < col->n_hosts; i++) {
		struct host *h = &col->hosts[i];
		uint64_t events = h->done_events + h->events;

		fprintf(stderr, "collect: %-16s %-4s %9.0f events/s %12" PRIu64 " events %10"
			PRIu64 " lost  file %s\n", h->name, h->up ? "up" : "down",
			period > 0 ? (double)(events - h->events_at_status) / period : 0.0, events,
			h->done_lost + h->lost, h->path[0] ? h->path : "-");
		h->events_at_status = events;
	}
}

static int run(struct collect *col)
{
	double t0 = now_s(), next_status = t0 + col->status_sec, last_status = t0;
	bool stopping = false;
	int ret = 0;

	for (;;) {
		struct pollfd pfds[MAX_HOSTS];
		unsigned int running = 0;
		double t = now_s();
		pid_t pid;
		int status_code;

		if ((stop || (col->duration && t - t0 >= col->duration)) && !stopping) {
			stopping = true;
			for (unsigned int i = 0; i < col->n_hosts; i++)
				if (col->hosts[i].pid)
					kill(col->hosts[i].pid, SIGTERM);
		}
		while ((pid = waitpid(-1, &status_code, WNOHANG)) > 0)
			for (unsigned int i = 0; i < col->n_hosts; i++)
				if (col->hosts[i].pid == pid)
					recorder_ended(col, &col->hosts[i], status_code, t,
						       stopping);
		for (unsigned int i = 0; i < col->n_hosts; i++) {
			struct host *h = &col->hosts[i];

			if (!h->pid && !stopping && t >= h->start_at &&
			    start_recorder(col, h, t0)) {
				fprintf(stderr, "ringtap collect: %s: %s\n", h->name, strerror(errno));
				ret = 1;
			}
			pfds[i] = (struct pollfd){ .fd = h->err_fd, .events = POLLIN };
			running += h->pid != 0;
		}
		if (stopping && !running)
			break;
		poll(pfds, col->n_hosts, 100);
		for (unsigned int i = 0; i < col->n_hosts; i++)
			if (col->hosts[i].err_fd >= 0 && pfds[i].revents)
				read_recorder(col, &col->hosts[i]);
		if (col->status_sec > 0 && now_s() >= next_status) {
			status(col, now_s() - last_status);
			last_status = now_s();
			next_status += col->status_sec;
		}
	}
	/* The last line: rates over the whole run. */
	for (unsigned int i = 0; i < col->n_hosts; i++)
		col->hosts[i].events_at_status = 0;
	status(col, now_s() - t0);
	return ret;
}

int cmd_collect(int argc, char **argv)
{
	enum { OPT_STATUS_SEC = 0x100 };
	static const struct option longopts[] = {
		{ "hosts", required_argument, NULL, 'H' },
		{ "output", required_argument, NULL, 'o' },
		{ "events", required_argument, NULL, 'e' },
		{ "duration", required_argument, NULL, 'd' },
		{ "status-sec", required_argument, NULL, OPT_STATUS_SEC },
		CLI_TLS_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	static struct collect col;
	struct ringtap_client_opts tls = { 0 };
	const char *hosts = NULL;
	int opt;

	col.events = "ringtap_test:*";
	col.status_sec = 5;
	while ((opt = getopt_long(argc, argv, ":H:o:e:d:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'H':
			hosts = optarg;
			break;
		case 'o':
			col.dir = optarg;
			break;
		case 'e':
			col.events = optarg;
			break;
		case 'd':
			if (!cli_seconds("collect", "--duration", optarg, &col.duration))
				return 1;
			break;
		case OPT_STATUS_SEC:
			if (!cli_seconds("collect", "--status-sec", optarg, &col.status_sec))
				return 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case '?':
		case ':':
			cli_bad_option("collect", argv, opt);
			return 1;
		default:
			if (cli_tls_option(opt, optarg, &tls))
				break;
			usage(stderr);
			return 1;
		}
	}
	col.ca = tls.tls_ca;
	col.cert = tls.tls_cert;
	col.key = tls.tls_key;
	if (optind < argc) {
		fprintf(stderr, "ringtap collect: unexpected argument '%s'\n", argv[optind]);
		return 1;
	}
	if (!hosts || !col.dir) {
		fprintf(stderr, "ringtap collect: %s is required (see ringtap collect --help)\n",
			!hosts ? "-H HOSTS" : "-o DIR");
		return 1;
	}
	if (mkdir(col.dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "ringtap collect: %s: %s\n", col.dir, strerror(errno));
		return 1;
	}
	if (read_hosts(&col, hosts))
		return 1;
	/* A directory used before keeps its files: this run starts past them. */
	for (unsigned int i = 0; i < col.n_hosts; i++) {
		struct host *h = &col.hosts[i];

		for (host_path(&col, h); !access(h->path, F_OK); host_path(&col, h))
			h->segment++;
		h->path[0] = '\0';
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	return run(&col);
}
