// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recording.h"
#include "tracedat.h"
#include "view.h"
#include "wire.h"

/*
 * The protobuf capture's stdio buffer: written out when full, on a pause,
 * once a second. Ours: given no buffer, glibc takes st_blksize (4 KiB on
 * tmpfs and ext4) whatever size is asked, and a frame of a page is larger,
 * so every page was a write() of its own.
 */
#define RECORD_BUFFER	(256u << 10)

/*
 * The recording goes to a file of its own beside path (the same file
 * system, so the rename at the end is atomic): a run that fails before the
 * stream starts leaves whatever path held as it was.
 */
static int open_temp(struct recording *r, const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dir_len = slash ? (size_t)(slash + 1 - path) : 0;
	mode_t mask;
	int fd;

	if (asprintf(&r->tmp_path, "%.*s.%s.XXXXXX", (int)dir_len, path, path + dir_len) < 0) {
		r->tmp_path = NULL;
		return -ENOMEM;
	}
	fd = mkostemp(r->tmp_path, O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		free(r->tmp_path);
		r->tmp_path = NULL;
		return -err;
	}
	/* The mode a plain create would give it, not mkostemp's 0600. */
	mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	return fd;
}

int recording_open(struct recording *r, const char *path, bool tracedat)
{
	struct stat st;
	int fd, err;

	memset(r, 0, sizeof(*r));
	r->msgs = stderr;
	r->fd = -1;
	r->path = path;
	r->tracedat = tracedat;
	/* Said now, as opening it for writing would, not after the recording. */
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		err = EISDIR;
		goto fail;
	}
	fd = open_temp(r, path);
	if (fd < 0) {
		err = -fd;
		goto fail;
	}
	if (tracedat) {
		r->fd = fd;
		return 0;
	}
	if ((r->out_buf = malloc(RECORD_BUFFER)) && (r->out = fdopen(fd, "wb"))) {
		setvbuf(r->out, r->out_buf, _IOFBF, RECORD_BUFFER);
		return 0;
	}
	err = errno ? errno : ENOMEM;
	close(fd);
	unlink(r->tmp_path);
	free(r->tmp_path);
	r->tmp_path = NULL;
	free(r->out_buf);
	r->out_buf = NULL;
fail:
	fprintf(r->msgs, "ringtap record: %s: %s\n", path, strerror(err));
	return -err;
}

/* trace.dat: the format text of a Schema and the HostTexts. */
static void take_texts(struct recording *r, const Ringtap__Frame *f)
{
	if (f->msg_case == RINGTAP__FRAME__MSG_SCHEMA) {
		const Ringtap__Schema *s = f->schema;

		if (!s->format || !*s->format ||
		    tracedat_add_format(r->td, s->system, s->format, strlen(s->format)))
			r->bad_formats++;
	} else if (f->msg_case == RINGTAP__FRAME__MSG_HOST_TEXTS) {
		const Ringtap__HostTexts *h = f->host_texts;

		r->host_texts++;
		/* What is missing stays empty: addresses and "<...>" in the report. */
		if (h->has_kallsyms)
			tracedat_set_kallsyms(r->td, (const char *)h->kallsyms.data, h->kallsyms.len);
		if (h->has_printk_formats)
			tracedat_set_printk_formats(r->td, (const char *)h->printk_formats.data,
						    h->printk_formats.len);
		if (h->has_saved_cmdlines)
			tracedat_set_cmdlines(r->td, (const char *)h->saved_cmdlines.data,
					      h->saved_cmdlines.len);
	}
}

/*
 * Schemas and HostTexts reach a client only through a tap (ringtap_next()
 * hands out neither); a frame tap would have every frame unpacked, pages
 * too. Of the frames as they came, those two are unpacked here, and the
 * pages are read in place (record views).
 */
static void tracedat_tap(struct recording *r, const uint8_t *frame, size_t len)
{
	const uint8_t *msg;
	uint32_t number;
	size_t msg_len;
	uint64_t payload_len;
	int used = rt_wire_varint_decode(frame, len, &payload_len);
	Ringtap__Frame *f;

	/*
	 * The library parses the frame after the tap and ends the stream at one
	 * that does not parse: such a frame is skipped here.
	 */
	if (!r->td || used <= 0 || payload_len != len - (size_t)used ||
	    rt_view_frame_message(frame + used, payload_len, &number, &msg, &msg_len) != 1 ||
	    (number != RINGTAP__FRAME__MSG_SCHEMA && number != RINGTAP__FRAME__MSG_HOST_TEXTS))
		return;
	f = ringtap__frame__unpack(NULL, payload_len, frame + used);
	if (!f) {
		/* No memory, as the library parses it: said as a missing format, empty texts. */
		if (number == RINGTAP__FRAME__MSG_SCHEMA)
			r->bad_formats++;
		else
			r->host_texts++;
		return;
	}
	take_texts(r, f);
	ringtap__frame__free_unpacked(f, NULL);
}

void recording_tap_bytes(void *ctx, const uint8_t *frame, size_t len)
{
	struct recording *r = ctx;

	if (r->tracedat) {
		tracedat_tap(r, frame, len);
		return;
	}
	if (r->write_error)
		return;
	if (fwrite(frame, 1, len, r->out) != len) {
		r->write_error = errno ? errno : EIO;
		return;
	}
	r->unflushed_frames++;
	r->unflushed_bytes += len;
}

/*
 * Frames reach the file a buffer at a time, not a write per page: when the
 * stream pauses (a wait for the next frame timed out) and once a second, so
 * at most a second of the stream is held here. Counts what is on disk.
 */
void recording_flush(struct recording *r)
{
	if (r->tracedat || r->write_error || !r->unflushed_frames)
		return;
	if (fflush(r->out)) {
		r->write_error = errno ? errno : EIO;
		return;
	}
	r->frames += r->unflushed_frames;
	r->bytes += r->unflushed_bytes;
	r->unflushed_frames = r->unflushed_bytes = 0;
}

static uint64_t cpu_lost(const struct cpu_losses *l)
{
	return l->kernel + l->queue + l->malformed;
}

/* "N pages, B bytes, L lost (cpuC L, ...)": the first few CPUs that lost any. */
void recording_progress(struct recording *r, bool last)
{
	bool tty = isatty(fileno(r->msgs));
	char per_cpu[128] = "";
	size_t n = 0;
	unsigned int shown = 0;

	for (unsigned int i = 0; i < r->cpus && n < sizeof(per_cpu); i++) {
		uint64_t lost = cpu_lost(&r->cpu[i]);

		if (!lost)
			continue;
		if (shown++ == 4) {
			n += (size_t)snprintf(per_cpu + n, sizeof(per_cpu) - n, ", ...");
			break;
		}
		n += (size_t)snprintf(per_cpu + n, sizeof(per_cpu) - n, "%scpu%u %" PRIu64,
				      shown > 1 ? ", " : " (", i, lost);
	}
	if (shown && n < sizeof(per_cpu))
		snprintf(per_cpu + n, sizeof(per_cpu) - n, ")");
	fprintf(r->msgs, "%sringtap record: %" PRIu64 " events, %" PRIu64 " pages, %" PRIu64
		" bytes, %" PRIu64 " lost%s", tty ? "\r" : "", r->events, r->pages, r->bytes,
		r->lost, per_cpu);
	r->line_open = tty && !last;
	if (!last)
		fputs(tty ? "" : "\n", r->msgs);
	else if (r->streamed)
		fprintf(r->msgs, "; into %s\n", r->path);
	else
		fprintf(r->msgs, "; nothing streamed, %s left as it was\n", r->path);
}

const char *recording_nl(struct recording *r)
{
	bool open = r->line_open;

	r->line_open = false;
	return open ? "\n" : "";
}

/*
 * The clock file aligns this host's trace with others after the fact: per
 * connection a line naming the boot and trace clock, then a line per
 * Heartbeat with the trace clock and realtime read at one instant.
 */
void recording_clock_boot(struct recording *r, const Ringtap__Welcome *w)
{
	if (r->clock)
		fprintf(r->clock, "boot %s host %s clock %s\n", w->boot_id, w->hostname,
			w->trace_clock);
}

static void clock_pair(struct recording *r, const Ringtap__Heartbeat *h)
{
	if (!r->clock)
		return;
	fprintf(r->clock, "pair %" PRIu64 " %" PRIu64 "\n", h->trace_clock_ns, h->realtime_ns);
	fflush(r->clock);
}

static void count_loss(struct recording *r, unsigned int cpu, const Ringtap__Lost *l)
{
	struct cpu_losses *c = &r->cpu[cpu];

	r->lost += l->count;
	if (l->source == RINGTAP__LOSS_SOURCE__QUEUE)
		c->queue += l->count;
	else if (l->source == RINGTAP__LOSS_SOURCE__MALFORMED)
		c->malformed += l->count;
	else
		c->kernel += l->count;
	if (l->has_count_exact && !l->count_exact)
		c->uncounted++;
}

/* The Welcome describes the file: byte order, long and sub-buffer size, CPUs, clock. */
static int start_tracedat(struct recording *r, const Ringtap__Welcome *w)
{
	const Ringtap__Layout *l = w->layout;
	struct tracedat_params p = {
		.big_endian = l->big_endian,
		.long_size = l->long_size,
		.page_size = l->sub_buffer_size,
		.cpus = w->cpus,
	};
	char *dir = strdup(r->path), *slash;
	int ret;

	if (!dir) {
		fprintf(r->msgs, "ringtap record: %s\n", strerror(ENOMEM));
		return -ENOMEM;
	}
	/* Spools next to the output: the same disk, the room it will need. */
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else
		slash[slash == dir] = '\0';
	p.spool_dir = dir;
	r->page_size = p.page_size;
	ret = tracedat_open(&r->td, r->fd, &p);
	if (ret) {
		fprintf(r->msgs, "ringtap record: %s: a trace.dat for %u CPUs, %u-byte longs and "
			"%u-byte sub-buffers in %s: %s\n", r->path, p.cpus, p.long_size,
			p.page_size, dir, strerror(-ret));
		goto out;
	}
	ret = tracedat_set_headers(r->td, l->header_page, strlen(l->header_page),
				   l->header_event, strlen(l->header_event));
	if (ret) {
		fprintf(r->msgs, "ringtap record: the daemon's header texts: %s\n", strerror(-ret));
		goto out;
	}
	/* Without it trace-cmd takes a ns clock; a name it cannot hold changes nothing else. */
	tracedat_set_clock(r->td, w->trace_clock);
out:
	free(dir);
	return ret;
}

/* The losses as each CPU's stats, then the pages into place. Returns the exit status. */
static int finish_tracedat(struct recording *r)
{
	struct tracedat_result res;
	int ret;

	for (unsigned int i = 0; i < r->cpus; i++) {
		const struct cpu_losses *l = &r->cpu[i];
		char stats[256];

		/* "overrun" as the kernel counts it: overwritten before it was read. */
		snprintf(stats, sizeof(stats),
			 "overrun: %" PRIu64 "\n"
			 "ringtap queue lost: %" PRIu64 "\n"
			 "ringtap malformed lost: %" PRIu64 "\n"
			 "ringtap losses not counted: %" PRIu64 "\n"
			 "ringtap reconnections: %" PRIu64 "\n",
			 l->kernel, l->queue, l->malformed, l->uncounted, r->gaps);
		tracedat_set_cpu_stats(r->td, i, stats);
	}
	if (r->bad_formats)
		fprintf(r->msgs, "ringtap record: %u event formats missing from %s: trace-cmd will "
			"not name those events\n", r->bad_formats, r->path);
	ret = tracedat_finish(r->td, &res);
	if (!ret)
		return 0;
	if (!res.readable)
		fprintf(r->msgs, "ringtap record: writing %s: %s; it is no usable trace.dat\n",
			r->path, strerror(-ret));
	else
		fprintf(r->msgs, "ringtap record: writing %s: %s; trace-cmd reads the %" PRIu64
			" pages it holds, %" PRIu64 " more did not fit\n", r->path, strerror(-ret),
			res.pages, res.pages_dropped);
	return 1;
}

/* One page into the trace.dat; false (and why, on msgs) when the recording must stop. */
static bool add_page(struct recording *r, const struct ringtap_event *ev)
{
	int ret = tracedat_add_page(r->td, ev->cpu, ev->page->data, ev->page->len);

	if (ret == -EINVAL) {
		fprintf(r->msgs, "%sringtap record: a page of %zu bytes for cpu %u, where the "
			"Welcome's layout says %u\n", recording_nl(r), ev->page->len, ev->cpu,
			r->page_size);
		return false;
	}
	if (ret) {
		r->write_error = -ret;
		return false;
	}
	r->bytes += ev->page->len;
	return true;
}


int recording_start(struct recording *r, const Ringtap__Welcome *w)
{
	recording_clock_boot(r, w);
	r->cpus = w->cpus;
	r->cpu = calloc(r->cpus ? r->cpus : 1, sizeof(*r->cpu));
	if (!r->cpu) {
		fprintf(r->msgs, "ringtap record: %s\n", strerror(ENOMEM));
		return -ENOMEM;
	}
	return r->tracedat ? start_tracedat(r, w) : 0;
}

void recording_gap(struct recording *r)
{
	r->gaps++;
	for (unsigned int cpu = 0; cpu < r->cpus; cpu++)
		r->cpu[cpu].uncounted++;
}

bool recording_event(struct recording *r, const struct ringtap_event *ev)
{
	/* The daemon streams: from now on the recording replaces what path held. */
	if (ev->kind != RINGTAP_END && ev->kind != RINGTAP_ERROR_FRAME)
		r->streamed = true;
	switch (ev->kind) {
	case RINGTAP_PAGE:
		if (r->tracedat && !add_page(r, ev))
			return false;
		r->pages++;
		r->events += ev->page_records;
		break;
	case RINGTAP_HEARTBEAT:
		clock_pair(r, ev->heartbeat);
		break;
	case RINGTAP_LOST:
		count_loss(r, ev->cpu, ev->lost);
		break;
	default:
		break;
	}
	return true;
}

int recording_finish(struct recording *r)
{
	if (r->tracedat)
		/* A write error sticks in the writer: finish says it, with what the file holds. */
		return r->td ? finish_tracedat(r) : 1;
	if (!r->write_error)
		return 0;
	fprintf(r->msgs, "ringtap record: writing %s: %s; the file holds at least the %" PRIu64
		" whole frames written before\n", r->path, strerror(r->write_error), r->frames);
	return 1;
}

int recording_close(struct recording *r)
{
	int ret = 0;

	if (r->clock)
		fclose(r->clock);
	tracedat_free(r->td);
	free(r->cpu);
	if (r->tracedat ? r->fd >= 0 && close(r->fd) : r->out && fclose(r->out)) {
		fprintf(r->msgs, "ringtap record: closing %s: %s\n", r->path, strerror(errno));
		ret = 1;
	}
	if (r->tmp_path && r->streamed && rename(r->tmp_path, r->path)) {
		fprintf(r->msgs, "ringtap record: %s: %s; the recording is in %s\n", r->path,
			strerror(errno), r->tmp_path);
		ret = 1;
	} else if (r->tmp_path && !r->streamed) {
		unlink(r->tmp_path);
	}
	free(r->tmp_path);
	/* After fclose: stdio writes what it holds from this buffer. */
	free(r->out_buf);
	r->out_buf = NULL;
	r->tmp_path = NULL;
	r->td = NULL;
	r->cpu = NULL;
	r->clock = NULL;
	r->out = NULL;
	r->fd = -1;
	return ret;
}
