// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tracedat: trace-cmd's trace.dat, version 6. The file, in order: magic and
 * version, byte order, long size, page size; header_page and header_event;
 * ftrace formats; event formats by system; kallsyms; printk formats; saved
 * cmdlines; the CPU count; options; "flyrecord" with each CPU's data offset
 * and size, then the trace clock; each CPU's sub-buffers, page aligned.
 *
 * The header goes in last, once the data is in place: then a disk that fills
 * up while the pages move can still be given back room for it, by cutting
 * the newest pages off the end of the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracedat.h"

/* Bytes moved from a spool to the output per step; a page at a time when room is short. */
#define MOVE_CHUNK (256u << 10)
/*
 * Held free from the start in a spool-like file and let go at finish, so
 * that a recording stopped by a full disk still has room for the header and
 * the first chunk moved.
 */
#define RESERVE_SIZE (1u << 20)

#define PAGE_SIZE_MIN 256u
#define PAGE_SIZE_MAX (16u << 20)

/*
 * Option ids, from trace-cmd's source: the man page documents the options
 * section but not the ids.
 */
enum {
	OPTION_DONE = 0,
	OPTION_CPUSTAT = 2,
	OPTION_TRACECLOCK = 4,
};

struct text {
	char *p;
	size_t len;
};

struct format {
	char *system;
	struct text text;
};

struct cpu_data {
	int spool;		/* -1 until the CPU's first page */
	uint64_t size;		/* bytes of whole pages in the spool */
	char *stats;
	uint64_t offset, len;	/* where finish put the CPU's data in the output */
};

struct tracedat {
	int fd;
	char *spool_dir;
	bool big_endian;
	unsigned int long_size, page_size, cpus;
	unsigned int align;	/* of each CPU's data in the file */
	struct text header_page, header_event, kallsyms, printk, cmdlines;
	bool have_headers;
	char *clock;
	struct format *formats;
	size_t n_formats, formats_alloc;
	struct cpu_data *cpu;
	int reserve;
	int error;		/* the first write error; sticks */
	bool finished;
	uint64_t pages_dropped;
	uint8_t *move_buf;
	size_t move_chunk;
	tracedat_write_hook hook;
	void *hook_ctx;
};

/* A growing byte buffer for the header; the first failure sticks. */
struct buf {
	uint8_t *p;
	size_t len, cap;
	int err;
};

static void buf_put(struct buf *b, const void *data, size_t len)
{
	size_t cap;
	uint8_t *p;

	if (b->err || !len)
		return;
	if (len > b->cap - b->len) {
		cap = b->cap ? b->cap : 4096;
		while (cap - b->len < len) {
			if (cap > SIZE_MAX / 2) {
				b->err = -ENOMEM;
				return;
			}
			cap *= 2;
		}
		p = realloc(b->p, cap);
		if (!p) {
			b->err = -ENOMEM;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
}

/* Stores v in size bytes at p, in the file's byte order. */
static void store_num(const struct tracedat *w, uint8_t *p, uint64_t v, unsigned int size)
{
	for (unsigned int i = 0; i < size; i++)
		p[i] = (uint8_t)(v >> (8 * (w->big_endian ? size - 1 - i : i)));
}

static void buf_num(struct buf *b, const struct tracedat *w, uint64_t v, unsigned int size)
{
	uint8_t out[8];

	store_num(w, out, v, size);
	buf_put(b, out, size);
}

static void buf_str0(struct buf *b, const char *s)
{
	buf_put(b, s, strlen(s) + 1);
}

static bool fits_off_t(uint64_t v)
{
	/* off_t is signed and, without _FILE_OFFSET_BITS=64 on 32-bit, narrow. */
	return sizeof(off_t) >= 8 ? v <= INT64_MAX : v <= INT32_MAX;
}

/*
 * Writes all of len at off, through the test hook. 0, or -errno with *done
 * the bytes that did get written from the start.
 */
static int write_at(struct tracedat *w, int cpu, int fd, const void *data, size_t len,
		    uint64_t off, size_t *done)
{
	const uint8_t *p = data;
	size_t n = 0;
	int ret = 0;

	if (!fits_off_t(off) || !fits_off_t(off + len))
		ret = -EFBIG;
	while (!ret && n < len) {
		ssize_t r;

		if (w->hook) {
			ret = w->hook(w->hook_ctx, cpu, off + n, len - n);
			if (ret)
				break;
		}
		r = pwrite(fd, p + n, len - n, (off_t)(off + n));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			ret = -errno;
		else if (r == 0)
			ret = -EIO;
		else
			n += (size_t)r;
	}
	if (done)
		*done = n;
	return ret;
}

/* ftruncate() whose failure callers may ignore: it only ever costs space. */
static int cut(int fd, uint64_t len)
{
	return ftruncate(fd, (off_t)len) ? -errno : 0;
}

static int read_at(int fd, void *data, size_t len, uint64_t off)
{
	uint8_t *p = data;
	size_t n = 0;

	while (n < len) {
		ssize_t r = pread(fd, p + n, len - n, (off_t)(off + n));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO;	/* the spool is shorter than we wrote: not ours to guess */
		n += (size_t)r;
	}
	return 0;
}

/* An unlinked file in dir, on the output's file system: its space is the output's. */
static int open_spool(const char *dir)
{
	char *path;
	int fd;

	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	/* File systems without O_TMPFILE: a named file, unlinked at once. */
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -errno;
	if (asprintf(&path, "%s/.ringtap-spool-XXXXXX", dir) < 0)
		return -ENOMEM;
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0) {
		fd = -errno;
	} else if (unlink(path)) {
		int err = -errno;

		close(fd);
		fd = err;
	}
	free(path);
	return fd;
}

static void drop_spool(struct cpu_data *c)
{
	if (c->spool >= 0)
		close(c->spool);
	c->spool = -1;
}

static void set_error(struct tracedat *w, int err)
{
	if (!w->error)
		w->error = err;
}

int tracedat_open(struct tracedat **out, int fd, const struct tracedat_params *p)
{
	struct tracedat *w;
	struct stat st;
	long host_page = sysconf(_SC_PAGESIZE);
	int ret = -ENOMEM;

	*out = NULL;
	if (!p || fd < 0 || (p->long_size != 4 && p->long_size != 8) || !p->cpus ||
	    p->page_size < PAGE_SIZE_MIN || p->page_size > PAGE_SIZE_MAX ||
	    (p->page_size & (p->page_size - 1)))
		return -EINVAL;
	if (fstat(fd, &st))
		return -errno;
	/* Data is put in place with pwrite(), newest first. */
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (ftruncate(fd, 0))
		return -errno;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = fd;
	w->reserve = -1;
	w->big_endian = p->big_endian;
	w->long_size = p->long_size;
	w->page_size = p->page_size;
	w->cpus = p->cpus;
	/* trace-cmd mmaps each CPU's data: its start must suit the reader's pages too. */
	w->align = host_page > (long)p->page_size && host_page <= (long)PAGE_SIZE_MAX &&
		   !(host_page & (host_page - 1)) ? (unsigned int)host_page : p->page_size;
	w->move_chunk = MOVE_CHUNK > p->page_size ? MOVE_CHUNK : p->page_size;
	w->spool_dir = strdup(p->spool_dir ? p->spool_dir : ".");
	w->cpu = calloc(p->cpus, sizeof(*w->cpu));
	if (!w->spool_dir || !w->cpu)
		goto fail;
	for (unsigned int i = 0; i < p->cpus; i++)
		w->cpu[i].spool = -1;

	/* Best effort: without the room, a full disk costs the newest pages at finish. */
	w->reserve = open_spool(w->spool_dir);
	if (w->reserve < 0) {
		ret = w->reserve;
		goto fail;
	}
	if (posix_fallocate(w->reserve, 0, RESERVE_SIZE)) {
		close(w->reserve);
		w->reserve = -1;
	}
	*out = w;
	return 0;

fail:
	tracedat_free(w);
	return ret;
}

void tracedat_free(struct tracedat *w)
{
	if (!w)
		return;
	for (unsigned int i = 0; w->cpu && i < w->cpus; i++) {
		drop_spool(&w->cpu[i]);
		free(w->cpu[i].stats);
	}
	free(w->cpu);
	if (w->reserve >= 0)
		close(w->reserve);
	for (size_t i = 0; i < w->n_formats; i++) {
		free(w->formats[i].system);
		free(w->formats[i].text.p);
	}
	free(w->formats);
	free(w->header_page.p);
	free(w->header_event.p);
	free(w->kallsyms.p);
	free(w->printk.p);
	free(w->cmdlines.p);
	free(w->clock);
	free(w->spool_dir);
	free(w->move_buf);
	free(w);
}

void tracedat_set_write_hook(struct tracedat *w, tracedat_write_hook hook, void *ctx)
{
	w->hook = hook;
	w->hook_ctx = ctx;
}

/* Copies a text; max is what its size field in the file holds. */
static int set_text(struct text *t, const char *s, size_t len, uint64_t max)
{
	char *p;

	if (!s && len)
		return -EINVAL;
	if (len > max || len == SIZE_MAX)
		return -EOVERFLOW;
	p = malloc(len + 1);
	if (!p)
		return -ENOMEM;
	if (len)
		memcpy(p, s, len);
	p[len] = '\0';
	free(t->p);
	t->p = p;
	t->len = len;
	return 0;
}

int tracedat_set_headers(struct tracedat *w, const char *header_page, size_t header_page_len,
			 const char *header_event, size_t header_event_len)
{
	int ret;

	if (!header_page || !header_page_len || !header_event || !header_event_len)
		return -EINVAL;
	ret = set_text(&w->header_page, header_page, header_page_len, UINT64_MAX);
	if (!ret)
		ret = set_text(&w->header_event, header_event, header_event_len, UINT64_MAX);
	w->have_headers = !ret;
	return ret;
}

int tracedat_add_format(struct tracedat *w, const char *system, const char *text, size_t len)
{
	struct format *f;

	if (!system || !*system || !text || !len)
		return -EINVAL;
	for (size_t i = 0; i < w->n_formats; i++) {
		f = &w->formats[i];
		if (!strcmp(f->system, system) && f->text.len == len && !memcmp(f->text.p, text, len))
			return 0;
	}
	/* Counts are 32-bit in the file. */
	if (w->n_formats >= UINT32_MAX)
		return -EOVERFLOW;
	if (w->n_formats == w->formats_alloc) {
		size_t n = w->formats_alloc ? w->formats_alloc * 2 : 16;

		f = realloc(w->formats, n * sizeof(*f));
		if (!f)
			return -ENOMEM;
		w->formats = f;
		w->formats_alloc = n;
	}
	f = &w->formats[w->n_formats];
	memset(f, 0, sizeof(*f));
	f->system = strdup(system);
	if (!f->system || set_text(&f->text, text, len, UINT64_MAX)) {
		free(f->system);
		return -ENOMEM;
	}
	w->n_formats++;
	return 0;
}

int tracedat_set_kallsyms(struct tracedat *w, const char *text, size_t len)
{
	return set_text(&w->kallsyms, text, len, UINT32_MAX);
}

int tracedat_set_printk_formats(struct tracedat *w, const char *text, size_t len)
{
	return set_text(&w->printk, text, len, UINT32_MAX);
}

int tracedat_set_cmdlines(struct tracedat *w, const char *text, size_t len)
{
	return set_text(&w->cmdlines, text, len, UINT64_MAX);
}

int tracedat_set_clock(struct tracedat *w, const char *name)
{
	char *c;

	/* trace-cmd reads the clock as one word in brackets. */
	if (!name || !*name || strpbrk(name, "[] \t\n") || strlen(name) > 64)
		return -EINVAL;
	c = strdup(name);
	if (!c)
		return -ENOMEM;
	free(w->clock);
	w->clock = c;
	return 0;
}

int tracedat_set_cpu_stats(struct tracedat *w, unsigned int cpu, const char *text)
{
	char *s;

	if (cpu >= w->cpus || !text || strlen(text) > (1u << 20))
		return -EINVAL;
	s = strdup(text);
	if (!s)
		return -ENOMEM;
	free(w->cpu[cpu].stats);
	w->cpu[cpu].stats = s;
	return 0;
}

int tracedat_add_page(struct tracedat *w, unsigned int cpu, const void *page, size_t len)
{
	struct cpu_data *c;
	int ret;

	if (!page || cpu >= w->cpus || len != w->page_size || w->finished)
		return -EINVAL;
	if (w->error)
		return w->error;
	c = &w->cpu[cpu];
	if (c->spool < 0) {
		c->spool = open_spool(w->spool_dir);
		if (c->spool < 0) {
			ret = c->spool;
			set_error(w, ret);
			return ret;
		}
	}
	ret = write_at(w, (int)cpu, c->spool, page, len, c->size, NULL);
	if (ret) {
		/* A torn page would shift every page after it; finish reads c->size bytes. */
		cut(c->spool, c->size);
		set_error(w, ret);
		return ret;
	}
	c->size += len;
	return 0;
}

/* The event formats: ftrace's own, then the other systems' each with all its events. */
static void put_formats(struct tracedat *w, struct buf *b)
{
	size_t n_ftrace = 0, n_systems = 0;

	for (size_t i = 0; i < w->n_formats; i++)
		n_ftrace += !strcmp(w->formats[i].system, "ftrace");
	buf_num(b, w, n_ftrace, 4);
	for (size_t i = 0; i < w->n_formats; i++) {
		if (strcmp(w->formats[i].system, "ftrace"))
			continue;
		buf_num(b, w, w->formats[i].text.len, 8);
		buf_put(b, w->formats[i].text.p, w->formats[i].text.len);
	}

	/* Systems in the order they first came, each with all its events. */
	for (size_t i = 0; i < w->n_formats; i++) {
		const char *sys = w->formats[i].system;
		bool first = strcmp(sys, "ftrace");

		for (size_t j = 0; first && j < i; j++)
			first = strcmp(w->formats[j].system, sys);
		n_systems += first;
	}
	buf_num(b, w, n_systems, 4);
	for (size_t i = 0; i < w->n_formats; i++) {
		const char *sys = w->formats[i].system;
		bool first = strcmp(sys, "ftrace");
		size_t n = 0;

		for (size_t j = 0; first && j < i; j++)
			first = strcmp(w->formats[j].system, sys);
		if (!first)
			continue;
		for (size_t j = i; j < w->n_formats; j++)
			n += !strcmp(w->formats[j].system, sys);
		buf_str0(b, sys);
		buf_num(b, w, n, 4);
		for (size_t j = i; j < w->n_formats; j++) {
			if (strcmp(w->formats[j].system, sys))
				continue;
			buf_num(b, w, w->formats[j].text.len, 8);
			buf_put(b, w->formats[j].text.p, w->formats[j].text.len);
		}
	}
}

/* The CPU count and the options section: each CPU's stats, the clock. */
static void put_options(struct tracedat *w, struct buf *b)
{
	buf_num(b, w, w->cpus, 4);
	buf_put(b, "options  ", 10);
	for (unsigned int i = 0; i < w->cpus; i++) {
		const char *stats = w->cpu[i].stats ? w->cpu[i].stats : "";
		bool nl = *stats && stats[strlen(stats) - 1] != '\n';
		char head[32];
		int n = snprintf(head, sizeof(head), "CPU: %u\n", i);

		/* trace-cmd turns the option's last byte, our NUL, into a newline. */
		buf_num(b, w, OPTION_CPUSTAT, 2);
		buf_num(b, w, (uint64_t)n + strlen(stats) + nl + 1, 4);
		buf_put(b, head, (size_t)n);
		buf_put(b, stats, strlen(stats));
		if (nl)
			buf_put(b, "\n", 1);
		buf_put(b, "", 1);
	}
	if (w->clock) {
		/* Like the trace_clock file: the current clock in brackets. */
		buf_num(b, w, OPTION_TRACECLOCK, 2);
		buf_num(b, w, strlen(w->clock) + 3, 4);
		buf_put(b, "[", 1);
		buf_put(b, w->clock, strlen(w->clock));
		buf_put(b, "]", 2);
	}
	buf_num(b, w, OPTION_DONE, 2);
}

/* The header, with a zeroed offset table at *table; its CPUSTAT options. */
static int build_header(struct tracedat *w, struct buf *b, size_t *table)
{
	static const uint8_t magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	uint8_t flags[2] = { w->big_endian ? 1 : 0, (uint8_t)w->long_size };

	buf_put(b, magic, sizeof(magic));
	buf_str0(b, "6");
	buf_put(b, flags, sizeof(flags));
	buf_num(b, w, w->page_size, 4);

	buf_str0(b, "header_page");
	buf_num(b, w, w->header_page.len, 8);
	buf_put(b, w->header_page.p, w->header_page.len);
	buf_str0(b, "header_event");
	buf_num(b, w, w->header_event.len, 8);
	buf_put(b, w->header_event.p, w->header_event.len);

	put_formats(w, b);

	buf_num(b, w, w->kallsyms.len, 4);
	buf_put(b, w->kallsyms.p, w->kallsyms.len);
	buf_num(b, w, w->printk.len, 4);
	buf_put(b, w->printk.p, w->printk.len);
	buf_num(b, w, w->cmdlines.len, 8);
	buf_put(b, w->cmdlines.p, w->cmdlines.len);

	put_options(w, b);

	buf_put(b, "flyrecord", 10);
	*table = b->len;
	for (unsigned int i = 0; i < w->cpus; i++) {
		buf_num(b, w, 0, 8);
		buf_num(b, w, 0, 8);
	}
	/* With the clock option, v6 readers expect the clock again after the table. */
	if (w->clock) {
		buf_num(b, w, strlen(w->clock) + 2, 8);
		buf_put(b, "[", 1);
		buf_put(b, w->clock, strlen(w->clock));
		buf_put(b, "]", 1);
	}
	return b->err;
}

static bool space_error(int err)
{
	return err == -ENOSPC || err == -EDQUOT;
}

/* Gives back the room a torn write took below what stays; best effort. */
static void release(struct tracedat *w, uint64_t off, size_t len, bool at_end)
{
	if (!len)
		return;
	if (at_end)
		cut(w->fd, off);
	else if (fallocate(w->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off,
			   (off_t)len))
		return;	/* no holes on this file system: the room stays taken */
}

/*
 * Moves one CPU's spool to base in the output, newest chunk first, cutting
 * the spool behind each chunk moved: the disk holds each page about once.
 * When a write fails the CPU keeps the whole pages in place that join up
 * with its newest. Short of room it first moves a page at a time; then,
 * with nothing in place yet, the newest page gives way (freeing its room);
 * past a file size limit what lies beyond goes.
 */
static int move_cpu(struct tracedat *w, struct cpu_data *c, uint64_t base)
{
	uint64_t hi = c->size, end = 0;	/* in place: the spool's bytes [hi, end) */
	size_t chunk = w->move_chunk;
	int err = 0;

	while (hi > 0) {
		size_t n = hi < chunk ? (size_t)hi : chunk, done = 0, whole;
		uint64_t lo = hi - n;
		int ret;

		ret = read_at(c->spool, w->move_buf, n, lo);
		if (!ret)
			ret = write_at(w, -1, w->fd, w->move_buf, n, base + lo, &done);
		if (!ret) {
			if (!end)
				end = hi;
			hi = lo;
			cut(c->spool, lo);
			continue;
		}
		whole = done - done % w->page_size;
		if (ret == -EFBIG && whole && !end) {
			/* The limit lies inside the chunk: what got under it stays. */
			err = ret;
			end = lo + whole;
			hi = lo;
			cut(c->spool, lo);
			continue;
		}
		release(w, base + lo, done, !end);
		if (space_error(ret) && n > w->page_size) {
			chunk = w->page_size;
			continue;
		}
		err = ret;
		/* Older pages would not join what is in place: a gap. */
		if (end || (!space_error(ret) && ret != -EFBIG))
			break;
		hi = ret == -EFBIG ? lo : hi - w->page_size;
		cut(c->spool, hi);
	}
	if (end) {
		c->offset = base + hi;
		c->len = end - hi;
	} else {
		c->offset = base;
		c->len = 0;
	}
	w->pages_dropped += (c->size - c->len) / w->page_size;
	drop_spool(c);
	return err;
}

/* Cuts the newest page off the end of the file; false when none is left. */
static bool shrink_last(struct tracedat *w)
{
	for (unsigned int i = w->cpus; i-- > 0;) {
		struct cpu_data *c = &w->cpu[i];

		if (!c->len)
			continue;
		if (cut(w->fd, c->offset + c->len - w->page_size))
			return false;
		c->len -= w->page_size;
		w->pages_dropped++;
		return true;
	}
	return false;
}

int tracedat_finish(struct tracedat *w, struct tracedat_result *res)
{
	struct tracedat_result ignored;
	struct buf hdr = { 0 };
	uint64_t pos, end;
	size_t table = 0;
	int ret;

	if (!res)
		res = &ignored;
	memset(res, 0, sizeof(*res));
	if (w->finished || !w->have_headers)
		return -EINVAL;
	w->finished = true;
	/* Its room is for what follows. */
	if (w->reserve >= 0)
		close(w->reserve);
	w->reserve = -1;

	ret = build_header(w, &hdr, &table);
	if (ret)
		goto out;
	w->move_buf = malloc(w->move_chunk);
	if (!w->move_buf) {
		ret = -ENOMEM;
		goto out;
	}

	pos = hdr.len;
	for (unsigned int i = 0; i < w->cpus; i++) {
		struct cpu_data *c = &w->cpu[i];

		pos = (pos + w->align - 1) / w->align * w->align;
		c->offset = pos;
		c->len = 0;
		if (c->size) {
			ret = move_cpu(w, c, pos);
			if (ret)
				set_error(w, ret);
		}
		pos = c->offset + c->len;
	}

	for (;;) {
		end = hdr.len;
		for (unsigned int i = 0; i < w->cpus; i++) {
			store_num(w, hdr.p + table + 16 * i, w->cpu[i].offset, 8);
			store_num(w, hdr.p + table + 16 * i + 8, w->cpu[i].len, 8);
			if (w->cpu[i].len && w->cpu[i].offset + w->cpu[i].len > end)
				end = w->cpu[i].offset + w->cpu[i].len;
		}
		ret = write_at(w, -1, w->fd, hdr.p, hdr.len, 0, NULL);
		if (!ret)
			break;
		set_error(w, ret);
		if (!space_error(ret) || !shrink_last(w))
			goto out;
	}
	res->readable = true;
	/* What a failed write left past the last page is no part of the file. */
	cut(w->fd, end);
	res->file_size = end;
	for (unsigned int i = 0; i < w->cpus; i++)
		res->pages += w->cpu[i].len / w->page_size;
	ret = 0;
out:
	if (ret)
		set_error(w, ret);
	for (unsigned int i = 0; i < w->cpus; i++)
		drop_spool(&w->cpu[i]);
	res->pages_dropped = w->pages_dropped;
	free(hdr.p);
	return w->error;
}
