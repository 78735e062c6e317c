// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tracedat: a trace.dat written from each captured tree (its texts, its
 * pages fed interleaved across CPUs as ringtap record gets them) is what
 * trace-cmd report reads without a word on stderr, with the same events the
 * kernel printed for the same records: timestamps, CPUs, pids, names and
 * payloads, as many; on the overrun trees it reports the losses the kernel
 * counted, and --stat shows each CPU's stats as given. A spool that hits a
 * full disk, a header that finds no room and a file size limit each leave a
 * file trace-cmd reads, with exactly the records of the pages kept, and the
 * error returned; a disk with room for one page at a time loses nothing.
 *
 * trace-cmd (libtracefs) mounts tracefs by itself when it looks for it:
 * it only ever runs here inside a new user and mount namespace (unshare),
 * where nothing it mounts reaches this machine. Where unshare is missing or
 * cannot make that namespace, trace-cmd does not run and the test fails:
 * it is never run bare.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "tracedat.h"

#define MAX_CPUS 8
#define MAX_PAGES 64

static const char *const events[] = { "*:*", NULL };
static char tmpdir[] = "/tmp/ringtap-tracedat.XXXXXX";

/* A captured tree as the writer gets it. */
struct tree {
	struct fixture fx;
	unsigned int cpus, page_size;
	uint8_t *pages[MAX_CPUS];
	size_t n_pages[MAX_CPUS];
	char *oracle;		/* trace.txt */
	size_t oracle_len;
};

/* One event line, normalized so that the kernel's text and trace-cmd's compare. */
struct line {
	char key[1024];		/* "SEC.USEC [CPU] PID NAME: PAYLOAD" */
	char when[64];		/* "SEC.USEC [CPU] PID" */
	char comm[64];
};

struct lines {
	struct line *v;
	size_t n, cap;
	unsigned int unparsed;	/* lines that are neither events nor known headers */
	unsigned long long dropped[MAX_CPUS];	/* trace-cmd's "CPU:N [M EVENTS DROPPED]" */
};

static void lines_free(struct lines *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->key, ((const struct line *)b)->key);
}

static char *trim(char *s)
{
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n'))
		s[--n] = '\0';
	return s;
}

/* Splits "NAME: PAYLOAD" (trace-cmd pads after the colon); false without a colon. */
static bool split_event(char *s, char **name, char **payload)
{
	char *colon = strchr(s, ':');

	if (!colon)
		return false;
	*colon = '\0';
	*name = s;
	*payload = trim(colon + 1);
	return true;
}

/*
 * "COMM-PID [CPU] [FLAGS] SEC.USEC: NAME: PAYLOAD", from the kernel's trace
 * file (with latency flags) or trace-cmd report (without). trace-cmd names
 * trace_marker writes "print" where the kernel prints no name: dropped, the
 * lines then read alike ("tracing_mark_write: TEXT").
 */
static bool parse_line(const char *text, bool kernel, struct line *out)
{
	char buf[1024], *s, *p, *name, *payload, *ts, *dash;
	unsigned int cpu;
	int n = 0, pid;

	snprintf(buf, sizeof(buf), "%s", text);
	s = trim(buf);
	for (p = strstr(s, " ["); p; p = strstr(p + 1, " [")) {
		n = 0;
		if (sscanf(p, " [%u]%n", &cpu, &n) == 1 && n && p[n] == ' ')
			break;
	}
	if (!p)
		return false;
	*p = '\0';
	dash = strrchr(s, '-');
	if (!dash || !dash[1])
		return false;
	*dash = '\0';
	if (sscanf(dash + 1, "%d", &pid) != 1)
		return false;
	snprintf(out->comm, sizeof(out->comm), "%s", s);
	out->comm[sizeof(out->comm) - 1] = '\0';
	p += n;
	while (*p == ' ')
		p++;
	if (kernel) {
		/* The latency flags, e.g. "d....". */
		p = strchr(p, ' ');
		if (!p)
			return false;
		while (*p == ' ')
			p++;
	}
	ts = p;
	p = strstr(p, ": ");
	if (!p || p == ts || strspn(ts, "0123456789.") != (size_t)(p - ts))
		return false;
	*p = '\0';
	if (!split_event(p + 2, &name, &payload))
		return false;
	if (!kernel && !strcmp(name, "print") && !split_event(payload, &name, &payload))
		return false;
	snprintf(out->when, sizeof(out->when), "%s [%03u] %d", ts, cpu, pid);
	snprintf(out->key, sizeof(out->key), "%s %s: %s", out->when, name, payload);
	return true;
}

static void parse_lines(struct lines *l, const char *text, bool kernel)
{
	char *copy = strdup(text), *save = NULL;

	memset(l, 0, sizeof(*l));
	for (char *s = strtok_r(copy, "\n", &save); s; s = strtok_r(NULL, "\n", &save)) {
		unsigned long long dropped;
		unsigned int cpu;
		struct line ln;
		int n = 0;

		if (!kernel && sscanf(s, "CPU:%u [%llu EVENTS DROPPED]%n", &cpu, &dropped, &n) == 2 &&
		    n && !s[n] && cpu < MAX_CPUS) {
			l->dropped[cpu] += dropped;
			continue;
		}
		if (!parse_line(s, kernel, &ln)) {
			if (*s != '#' && strncmp(s, "cpus=", 5))
				l->unparsed++;
			continue;
		}
		if (l->n == l->cap) {
			l->cap = l->cap ? l->cap * 2 : 256;
			l->v = realloc(l->v, l->cap * sizeof(*l->v));
		}
		l->v[l->n++] = ln;
	}
	free(copy);
	qsort(l->v, l->n, sizeof(*l->v), cmp_line);
}

/*
 * The same events, line by line. The comm is checked where the kernel knew
 * it: the kernel prints <...> for a pid its saved_cmdlines had lost, which
 * trace-cmd may know from the cmdlines given or from sched_switch records.
 */
static void compare_lines(const char *what, const struct lines *got, const struct lines *want,
			  bool payloads)
{
	unsigned int shown = 0;

	CHECK_EQ(got->n, want->n);
	CHECK_EQ(got->unparsed, 0);
	for (size_t i = 0; i < got->n && i < want->n; i++) {
		const struct line *g = &got->v[i], *w = &want->v[i];
		bool same = payloads ? !strcmp(g->key, w->key) : !strcmp(g->when, w->when);

		if (same && (!payloads || !strcmp(w->comm, "<...>") || !strcmp(g->comm, w->comm)))
			continue;
		CHECK(!"trace-cmd's line equals the kernel's");
		if (shown++ < 5)
			fprintf(stderr, "%s: line %zu:\n  trace-cmd: %s (%s)\n  kernel:    %s (%s)\n",
				what, i, payloads ? g->key : g->when, g->comm,
				payloads ? w->key : w->when, w->comm);
	}
}

/* The kernel's lines whose records are among those given ("SEC.USEC [CPU] PID"). */
static void select_lines(struct lines *out, const struct lines *all, const struct lines *records)
{
	bool *used = calloc(all->n + 1, sizeof(*used));

	memset(out, 0, sizeof(*out));
	out->cap = records->n + 1;
	out->v = calloc(out->cap, sizeof(*out->v));
	for (size_t r = 0; r < records->n; r++) {
		size_t i;

		for (i = 0; i < all->n; i++)
			if (!used[i] && !strcmp(all->v[i].when, records->v[r].when))
				break;
		CHECK(i < all->n);
		if (i == all->n)
			continue;
		used[i] = true;
		out->v[out->n++] = all->v[i];
	}
	free(used);
	qsort(out->v, out->n, sizeof(*out->v), cmp_line);
}

/* Reads FILE under ROOT/VARIANT; NULL and a failed check when it cannot. */
static char *tree_file(const struct tree *t, const char *name, size_t *len)
{
	char path[4400];
	size_t ignored;
	char *text;

	snprintf(path, sizeof(path), "%s/%s", t->fx.dir, name);
	text = read_whole_file(path, len ? len : &ignored);
	CHECK(text != NULL);
	return text;
}

static void tree_free(struct tree *t)
{
	for (unsigned int i = 0; i < t->cpus; i++)
		free(t->pages[i]);
	free(t->oracle);
	fixture_close(&t->fx);
}

static int tree_open(struct tree *t, const char *root, const char *variant)
{
	memset(t, 0, sizeof(*t));
	if (fixture_open(&t->fx, root, variant, events)) {
		CHECK(!"fixture opens");
		return -1;
	}
	t->cpus = (unsigned int)t->fx.ncpus;
	t->page_size = t->fx.layout->sub_buffer_size;
	CHECK(t->cpus > 0 && t->cpus <= MAX_CPUS);
	if (!t->cpus || t->cpus > MAX_CPUS)
		return -1;
	for (unsigned int i = 0; i < t->cpus; i++) {
		size_t len = 0;

		t->pages[i] = fixture_pages(&t->fx, (int)i, &len);
		CHECK(t->pages[i] && len % t->page_size == 0);
		t->n_pages[i] = len / t->page_size;
	}
	t->oracle = tree_file(t, "trace.txt", &t->oracle_len);
	return t->oracle ? 0 : -1;
}

/* The records of one page as "SEC.USEC [CPU] PID", rounded to µs as the kernel prints. */
struct page_records {
	struct tree *t;
	struct lines *out;
	uint64_t print_ip;
};

static int on_record(const struct rt_record *rec, void *p)
{
	struct page_records *pr = p;
	const struct rt_field_desc *pidf = rt_layout_common(pr->t->fx.layout, "common_pid");
	uint64_t pid = 0, us = (rec->timestamp + 500) / 1000;
	struct lines *l = pr->out;

	CHECK_EQ(rt_record_read_common(rec, pr->t->fx.layout, pidf, &pid), 0);
	if (rec->event && !strcmp(rec->event->name, "print")) {
		struct tep_format_field *ip = tep_find_field(rec->event, "ip");

		CHECK(ip && !rt_record_read_int(rec, ip, &pr->print_ip));
	}
	if (!l)
		return 0;
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 256;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
	}
	memset(&l->v[l->n], 0, sizeof(l->v[l->n]));
	snprintf(l->v[l->n].when, sizeof(l->v[l->n].when), "%" PRIu64 ".%06" PRIu64 " [%03u] %d",
		 us / 1000000, us % 1000000, rec->cpu, (int)(int32_t)pid);
	l->n++;
	return 0;
}

static void page_records(struct tree *t, unsigned int cpu, size_t page, struct page_records *pr)
{
	struct rt_page_result res;

	CHECK_EQ(rt_decode_page(t->fx.decoder, cpu, t->pages[cpu] + page * t->page_size,
				t->page_size, on_record, pr, &res), 0);
}

/*
 * saved_cmdlines ("PID COMM" lines) from the comms the kernel printed: the
 * trees carry none of their own.
 */
static char *oracle_cmdlines(const struct lines *oracle)
{
	size_t cap = oracle->n * 80 + 1, len = 0;
	char *text = calloc(1, cap);

	for (size_t i = 0; i < oracle->n; i++) {
		const struct line *l = &oracle->v[i];
		char entry[96];
		int pid = 0;

		if (l->comm[0] == '<' || sscanf(strrchr(l->when, ' ') + 1, "%d", &pid) != 1)
			continue;
		snprintf(entry, sizeof(entry), "%d %s\n", pid, l->comm);
		if (!strstr(text, entry) && len + strlen(entry) < cap) {
			strcpy(text + len, entry);
			len += strlen(entry);
		}
	}
	return text;
}

/* Every events/SYSTEM/NAME/format of the tree; each twice, to be kept once. */
static void add_tree_formats(struct tree *t, struct tracedat *w)
{
	char dir[4400];
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/events", t->fx.dir);
	d = opendir(dir);
	CHECK(d != NULL);
	while (d && (e = readdir(d))) {
		char sub[256], name[600];
		struct dirent *se;
		DIR *sd;

		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s", e->d_name);
		sd = fdopendir(openat(dirfd(d), sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
		while (sd && (se = readdir(sd))) {
			char rel[300];
			size_t len;
			char *text;

			/* Files beside the events (enable, filter) have no format. */
			snprintf(rel, sizeof(rel), "%s/format", se->d_name);
			if (se->d_name[0] == '.' || faccessat(dirfd(sd), rel, R_OK, 0))
				continue;
			snprintf(name, sizeof(name), "events/%s/%s/format", sub, se->d_name);
			text = tree_file(t, name, &len);
			if (!text)
				continue;
			CHECK_EQ(tracedat_add_format(w, sub, text, len), 0);
			CHECK_EQ(tracedat_add_format(w, sub, text, len), 0);
			free(text);
		}
		if (sd)
			closedir(sd);
	}
	if (d)
		closedir(d);
}

struct write_opts {
	tracedat_write_hook hook;
	void *hook_ctx;
	int add_ret[MAX_PAGES];	/* what tracedat_add_page() said, in the order fed */
	unsigned int n_added;
	struct tracedat_result res;
};

/*
 * Writes the tree's trace.dat to path, pages interleaved across CPUs as a
 * recording gets them. Returns what tracedat_finish() did.
 */
static int write_tree(struct tree *t, const char *path, struct write_opts *o)
{
	struct tracedat_params p = {
		.big_endian = t->fx.layout->big_endian,
		.long_size = t->fx.layout->long_size,
		.page_size = t->page_size,
		.cpus = t->cpus,
		.spool_dir = tmpdir,
	};
	struct tracedat *w = NULL;
	struct lines oracle;
	struct page_records pr = { .t = t };
	char *clock, *cmdlines, kallsyms[128];
	int fd, ret;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(fd >= 0);
	if (fd < 0)
		return -errno;
	ret = tracedat_open(&w, fd, &p);
	CHECK_EQ(ret, 0);
	if (ret)
		goto out;
	if (o->hook)
		tracedat_set_write_hook(w, o->hook, o->hook_ctx);
	CHECK_EQ(tracedat_set_headers(w, t->fx.layout->header_page, t->fx.layout->header_page_len,
				      t->fx.layout->header_event, t->fx.layout->header_event_len), 0);

	add_tree_formats(t, w);

	/* trace_clock: "[local] global ...": the one in brackets. */
	clock = tree_file(t, "trace_clock", NULL);
	if (clock) {
		char name[64] = "";

		CHECK_EQ(sscanf(strchr(clock, '[') ? strchr(clock, '[') : "", "[%63[^]]]", name), 1);
		CHECK_EQ(tracedat_set_clock(w, name), 0);
		free(clock);
	}
	for (unsigned int i = 0; i < t->cpus; i++) {
		char name[64], *stats;

		snprintf(name, sizeof(name), "per_cpu/cpu%u/stats", i);
		stats = tree_file(t, name, NULL);
		CHECK_EQ(tracedat_set_cpu_stats(w, i, stats ? stats : ""), 0);
		free(stats);
	}

	parse_lines(&oracle, t->oracle, true);
	cmdlines = oracle_cmdlines(&oracle);
	CHECK_EQ(tracedat_set_cmdlines(w, cmdlines, strlen(cmdlines)), 0);
	free(cmdlines);
	lines_free(&oracle);
	/*
	 * The trees carry no kallsyms: the one symbol trace_marker records
	 * point at, so that they print as the kernel printed them.
	 */
	for (unsigned int i = 0; i < t->cpus; i++)
		for (size_t pg = 0; pg < t->n_pages[i]; pg++)
			page_records(t, i, pg, &pr);
	snprintf(kallsyms, sizeof(kallsyms), "%016" PRIx64 " T tracing_mark_write\n", pr.print_ip);
	CHECK_EQ(tracedat_set_kallsyms(w, kallsyms, pr.print_ip ? strlen(kallsyms) : 0), 0);
	CHECK_EQ(tracedat_set_printk_formats(w, "", 0), 0);

	o->n_added = 0;
	for (size_t pg = 0;; pg++) {
		bool any = false;

		for (unsigned int i = 0; i < t->cpus; i++) {
			if (pg >= t->n_pages[i] || o->n_added >= MAX_PAGES)
				continue;
			any = true;
			ret = tracedat_add_page(w, i, t->pages[i] + pg * t->page_size,
						t->page_size);
			o->add_ret[o->n_added++] = ret;
		}
		if (!any)
			break;
	}
	ret = tracedat_finish(w, &o->res);
out:
	tracedat_free(w);
	close(fd);
	return ret;
}

/*
 * trace-cmd report ARGS -i FILE inside a new user and mount namespace.
 * Returns its exit status (-1 when it did not exit); *out and *err hold
 * what it printed.
 */
static int report(const char *file, const char *const *args, char **out, char **err)
{
	const char *argv[32] = { "unshare", "--user", "--map-root-user", "--mount", "trace-cmd",
				 "report" };
	char out_path[64], err_path[64];
	size_t n = 6, len;
	int status = -1;
	pid_t pid;

	for (; args && *args && n < 28; args++)
		argv[n++] = *args;
	argv[n++] = "-i";
	argv[n++] = file;
	argv[n] = NULL;
	snprintf(out_path, sizeof(out_path), "%s/report.out", tmpdir);
	snprintf(err_path, sizeof(err_path), "%s/report.err", tmpdir);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "cannot run unshare (%s): trace-cmd runs only inside a user and "
			"mount namespace, never bare\n", strerror(errno));
		_exit(127);
	}
	if (pid > 0 && waitpid(pid, &status, 0) == pid)
		status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	*out = read_whole_file(out_path, &len);
	*err = read_whole_file(err_path, &len);
	if (status)
		fprintf(stderr, "trace-cmd report %s: status %d:\n%s", file, status,
			*err ? *err : "");
	return status;
}

/*
 * trace-cmd report -N, without plugins: payloads as the kernel's print
 * formats give them. Its loss lines go to dropped, when given.
 */
static void report_matches(const char *what, const char *file, const struct lines *want,
			   unsigned long long *dropped)
{
	static const char *const no_plugins[] = { "-N", NULL };
	char *out = NULL, *err = NULL;
	struct lines got;

	CHECK_EQ(report(file, no_plugins, &out, &err), 0);
	CHECK_STR(err, "");
	parse_lines(&got, out ? out : "", false);
	compare_lines(what, &got, want, true);
	if (dropped)
		memcpy(dropped, got.dropped, sizeof(got.dropped));
	lines_free(&got);
	free(out);
	free(err);
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (uint64_t)st.st_size;
}

/* The numbers a reader needs before anything else, in place. */
static void check_file_start(const struct tree *t, const char *path)
{
	size_t len;
	char *p = read_whole_file(path, &len);
	uint32_t page = 0;

	CHECK(p && len > 20);
	if (!p || len <= 20)
		return;
	CHECK(!memcmp(p, "\x17\x08\x44tracing6", 11) && p[11] == '\0');
	CHECK_EQ(p[12], t->fx.layout->big_endian);
	CHECK_EQ(p[13], t->fx.layout->long_size);
	memcpy(&page, p + 14, 4);
	if (t->fx.layout->big_endian)
		page = __builtin_bswap32(page);
	CHECK_EQ(page, t->page_size);
	CHECK(!memcmp(p + 18, "header_page", 12));
	free(p);
}

static uint64_t stock_size;

static void test_variant(const char *root, const char *variant)
{
	static const char *const stat_args[] = { "--stat", NULL };
	static const char *const check_args[] = { "--check-events", NULL };
	struct write_opts o = { 0 };
	struct lines oracle, got;
	struct tree t;
	char path[128], *out = NULL, *err = NULL;
	unsigned long long dropped[MAX_CPUS] = { 0 }, total_dropped = 0;
	size_t total = 0;
	int ret;

	if (tree_open(&t, root, variant))
		return;
	snprintf(path, sizeof(path), "%s/%s.dat", tmpdir, variant);
	ret = write_tree(&t, path, &o);
	CHECK_EQ(ret, 0);
	for (unsigned int i = 0; i < t.cpus; i++)
		total += t.n_pages[i];
	CHECK_EQ(o.n_added, total);
	for (unsigned int i = 0; i < o.n_added; i++)
		CHECK_EQ(o.add_ret[i], 0);
	CHECK(o.res.readable);
	CHECK_EQ(o.res.pages, total);
	CHECK_EQ(o.res.pages_dropped, 0);
	CHECK_EQ(o.res.file_size, file_size(path));
	check_file_start(&t, path);
	if (!strcmp(variant, "stock"))
		stock_size = o.res.file_size;

	parse_lines(&oracle, t.oracle, true);
	CHECK(oracle.n > 100);
	report_matches(variant, path, &oracle, dropped);
	/* Losses the pages' commit words carry, as the kernel counted them in its stats. */
	for (unsigned int i = 0; i < t.cpus; i++) {
		char name[64], *stats, *p;
		unsigned long long overrun = ~0ULL;

		snprintf(name, sizeof(name), "per_cpu/cpu%u/stats", i);
		stats = tree_file(&t, name, NULL);
		p = stats ? strstr(stats, "\noverrun: ") : NULL;
		CHECK(p && sscanf(p, "\noverrun: %llu", &overrun) == 1);
		CHECK_EQ(dropped[i], overrun);
		total_dropped += dropped[i];
		free(stats);
	}

	/* As users run it: with plugins (sched_switch prints its own way). */
	CHECK_EQ(report(path, NULL, &out, &err), 0);
	CHECK_STR(err, "");
	parse_lines(&got, out ? out : "", false);
	compare_lines(variant, &got, &oracle, false);
	printf("%s: %zu events, as the kernel printed them, %llu reported lost; %" PRIu64
	       " bytes\n", variant, got.n, total_dropped, o.res.file_size);
	lines_free(&got);
	free(out);
	free(err);

	/* The kernel's stats per CPU, as given. */
	CHECK_EQ(report(path, stat_args, &out, &err), 0);
	for (unsigned int i = 0; i < t.cpus && out; i++) {
		char name[64], want[4096], *stats;

		snprintf(name, sizeof(name), "per_cpu/cpu%u/stats", i);
		stats = tree_file(&t, name, NULL);
		snprintf(want, sizeof(want), "CPU: %u\n%s", i, stats ? stats : "");
		CHECK(strstr(out, want) != NULL);
		free(stats);
	}
	free(out);
	free(err);
	CHECK_EQ(report(path, check_args, &out, &err), 0);
	free(out);
	free(err);

	lines_free(&oracle);
	tree_free(&t);
}

/* The kernel's lines of the pages given as (cpu, page) pairs, -1 ended. */
static void expected_lines(struct tree *t, const int *pages, struct lines *want)
{
	struct lines oracle, records = { 0 };
	struct page_records pr = { .t = t, .out = &records };

	for (; pages[0] >= 0; pages += 2)
		page_records(t, (unsigned int)pages[0], (size_t)pages[1], &pr);
	parse_lines(&oracle, t->oracle, true);
	select_lines(want, &oracle, &records);
	CHECK_EQ(want->n, records.n);
	lines_free(&oracle);
	lines_free(&records);
}

struct spool_budget {
	int pages_left;		/* spool writes that succeed */
	int spool_calls;
	int output_failures;	/* output writes at offset 0 (the header) that fail */
	size_t max_data_write;	/* longer writes of pages into the output fail; 0: none */
	int data_failures;
};

static int hook(void *ctx, int cpu, uint64_t offset, size_t len)
{
	struct spool_budget *b = ctx;

	if (cpu >= 0) {
		b->spool_calls++;
		return b->pages_left-- > 0 ? 0 : -ENOSPC;
	}
	if (offset == 0 && b->output_failures > 0) {
		b->output_failures--;
		return -ENOSPC;
	}
	if (offset && b->max_data_write && len > b->max_data_write) {
		b->data_failures++;
		return -ENOSPC;
	}
	return 0;
}

/* Room for a page at a time only, as finish moves pages: it then moves them one by one. */
static void test_tight_disk(const char *root)
{
	struct spool_budget b = { .pages_left = 1000 };
	struct write_opts o = { .hook = hook, .hook_ctx = &b };
	static const int kept[] = { 0, 0, 0, 1, 1, 0, -1 };
	struct lines want;
	struct tree t;
	char path[128];

	if (tree_open(&t, root, "stock"))
		return;
	b.max_data_write = t.page_size;
	snprintf(path, sizeof(path), "%s/tight.dat", tmpdir);
	CHECK_EQ(write_tree(&t, path, &o), 0);
	CHECK_EQ(b.data_failures, 1);	/* cpu0's two pages at once */
	CHECK(o.res.readable);
	CHECK_EQ(o.res.pages, 3);
	CHECK_EQ(o.res.pages_dropped, 0);
	expected_lines(&t, kept, &want);
	report_matches("tight disk", path, &want, NULL);
	lines_free(&want);
	tree_free(&t);
}

/* The disk fills while the pages come: what was spooled is in the file. */
static void test_spool_full(const char *root)
{
	struct spool_budget b = { .pages_left = 2 };
	struct write_opts o = { .hook = hook, .hook_ctx = &b };
	/* Fed cpu0 page 0, cpu1 page 0, then cpu0 page 1 finds the disk full. */
	static const int kept[] = { 0, 0, 1, 0, -1 };
	struct lines want;
	struct tree t;
	char path[128];

	if (tree_open(&t, root, "stock"))
		return;
	CHECK(t.cpus == 2 && t.n_pages[0] == 2 && t.n_pages[1] == 1);
	snprintf(path, sizeof(path), "%s/spool-full.dat", tmpdir);
	CHECK_EQ(write_tree(&t, path, &o), -ENOSPC);
	CHECK_EQ(o.n_added, 3);
	CHECK_EQ(o.add_ret[0], 0);
	CHECK_EQ(o.add_ret[1], 0);
	CHECK_EQ(o.add_ret[2], -ENOSPC);
	CHECK_EQ(b.spool_calls, 3);
	CHECK(o.res.readable);
	CHECK_EQ(o.res.pages, 2);
	CHECK_EQ(o.res.pages_dropped, 0);
	expected_lines(&t, kept, &want);
	CHECK(want.n > 10);
	report_matches("spool full", path, &want, NULL);
	lines_free(&want);
	tree_free(&t);
}

/* No room for the header at the end: the newest pages give way to it. */
static void test_header_full(const char *root)
{
	struct spool_budget b = { .pages_left = 1000, .output_failures = 1 };
	struct write_opts o = { .hook = hook, .hook_ctx = &b };
	/* The last CPU's data is the end of the file: cpu1's one page goes. */
	static const int kept[] = { 0, 0, 0, 1, -1 };
	struct lines want;
	struct tree t;
	char path[128];

	if (tree_open(&t, root, "stock"))
		return;
	snprintf(path, sizeof(path), "%s/header-full.dat", tmpdir);
	CHECK_EQ(write_tree(&t, path, &o), -ENOSPC);
	CHECK_EQ(b.output_failures, 0);
	CHECK(o.res.readable);
	CHECK_EQ(o.res.pages, 2);
	CHECK_EQ(o.res.pages_dropped, 1);
	CHECK_EQ(o.res.file_size, file_size(path));
	expected_lines(&t, kept, &want);
	report_matches("header full", path, &want, NULL);
	lines_free(&want);
	tree_free(&t);
}

/*
 * A file size limit (RLIMIT_FSIZE, SIGXFSZ ignored: EFBIG) a page and a half
 * short of the whole file: cpu0 keeps its first page, the rest is beyond.
 */
static void test_size_limit(const char *root)
{
	static const int kept[] = { 0, 0, -1 };
	struct lines want;
	struct tree t;
	char path[128];
	pid_t pid;
	int status = -1;

	if (tree_open(&t, root, "stock"))
		return;
	CHECK(stock_size > 2 * t.page_size);
	snprintf(path, sizeof(path), "%s/size-limit.dat", tmpdir);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct write_opts o = { 0 };
		struct rlimit rl;
		int ret;

		check_failures = 0;
		rl.rlim_cur = rl.rlim_max = stock_size - t.page_size - t.page_size / 2;
		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &rl))
			_exit(2);
		ret = write_tree(&t, path, &o);
		if (ret != -EFBIG || !o.res.readable || o.res.pages != 1 ||
		    o.res.pages_dropped != 2 || check_failures) {
			fprintf(stderr, "size limit: finish %d, readable %d, %" PRIu64 " pages, %"
				PRIu64 " dropped\n", ret, o.res.readable, o.res.pages,
				o.res.pages_dropped);
			_exit(1);
		}
		_exit(0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	expected_lines(&t, kept, &want);
	report_matches("size limit", path, &want, NULL);
	lines_free(&want);
	tree_free(&t);
}

/* What the writer refuses, before it writes anything. */
static void test_refusals(void)
{
	struct tracedat_params p = { .long_size = 8, .page_size = 4096, .cpus = 2,
				     .spool_dir = tmpdir };
	struct tracedat_result res;
	struct tracedat *w = NULL;
	char path[128], page[4096] = { 0 };
	int fd;

	snprintf(path, sizeof(path), "%s/refusals.dat", tmpdir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(fd >= 0);
	p.page_size = 3000;
	CHECK_EQ(tracedat_open(&w, fd, &p), -EINVAL);
	p.page_size = 4096;
	p.long_size = 2;
	CHECK_EQ(tracedat_open(&w, fd, &p), -EINVAL);
	p.long_size = 8;
	p.cpus = 0;
	CHECK_EQ(tracedat_open(&w, fd, &p), -EINVAL);
	p.cpus = 2;
	CHECK_EQ(tracedat_open(&w, -1, &p), -EINVAL);
	CHECK_EQ(tracedat_open(&w, fd, &p), 0);
	if (!w)
		return;
	CHECK_EQ(tracedat_add_page(w, 2, page, sizeof(page)), -EINVAL);
	CHECK_EQ(tracedat_add_page(w, 0, page, sizeof(page) - 1), -EINVAL);
	CHECK_EQ(tracedat_add_format(w, "", "x", 1), -EINVAL);
	CHECK_EQ(tracedat_set_clock(w, "lo cal"), -EINVAL);
	CHECK_EQ(tracedat_set_cpu_stats(w, 2, ""), -EINVAL);
	/* No header_page: nothing to describe the pages with. */
	CHECK_EQ(tracedat_finish(w, &res), -EINVAL);
	CHECK(!res.readable);
	CHECK_EQ(tracedat_set_headers(w, "a", 1, "b", 1), 0);
	CHECK_EQ(tracedat_finish(w, &res), 0);
	CHECK(res.readable);
	CHECK_EQ(tracedat_finish(w, &res), -EINVAL);
	CHECK_EQ(tracedat_add_page(w, 0, page, sizeof(page)), -EINVAL);
	tracedat_free(w);
	close(fd);
}

/* Numbers in the kernel's byte order: a big-endian file, without pages, reads as one. */
static void test_big_endian(const char *root)
{
	struct tracedat_params p = { .big_endian = true, .cpus = 3, .spool_dir = tmpdir };
	static const char *const endian_args[] = { "-e", NULL };
	struct tracedat_result res;
	struct tracedat *w = NULL;
	char path[128], *out = NULL, *err = NULL, *text;
	struct tree t;
	size_t len;
	int fd;

	if (tree_open(&t, root, "stock"))
		return;
	p.long_size = t.fx.layout->long_size;
	p.page_size = t.page_size;
	snprintf(path, sizeof(path), "%s/big-endian.dat", tmpdir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(tracedat_open(&w, fd, &p), 0);
	if (!w) {
		tree_free(&t);
		return;
	}
	CHECK_EQ(tracedat_set_headers(w, t.fx.layout->header_page, t.fx.layout->header_page_len,
				      t.fx.layout->header_event, t.fx.layout->header_event_len), 0);
	CHECK_EQ(tracedat_finish(w, &res), 0);
	CHECK(res.readable);
	CHECK_EQ(res.pages, 0);
	tracedat_free(w);
	close(fd);
	text = read_whole_file(path, &len);
	CHECK(text && len > 18 && text[12] == 1 && text[13] == (char)p.long_size);
	CHECK(text && len > 18 && (uint8_t)text[14] == (p.page_size >> 24 & 0xff) &&
	      (uint8_t)text[15] == (p.page_size >> 16 & 0xff) &&
	      (uint8_t)text[16] == (p.page_size >> 8 & 0xff) &&
	      (uint8_t)text[17] == (p.page_size & 0xff));
	free(text);
	CHECK_EQ(report(path, endian_args, &out, &err), 0);
	CHECK(out && strstr(out, "big endian"));
	CHECK_STR(err, "");
	free(out);
	free(err);
	tree_free(&t);
}

static void remove_tmpdir(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[512];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmpdir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(tmpdir);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_refusals();
	test_big_endian(argv[1]);
	test_variant(argv[1], "stock");
	test_variant(argv[1], "padded");
	test_variant(argv[1], "rt");
	test_variant(argv[1], "stock-overrun");
	test_variant(argv[1], "padded-overrun");
	test_variant(argv[1], "rt-overrun");
	test_spool_full(argv[1]);
	test_header_full(argv[1]);
	test_tight_disk(argv[1]);
	test_size_limit(argv[1]);
	remove_tmpdir();
	return check_exit("test-tracedat");
}
