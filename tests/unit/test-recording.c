// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * recording: the protobuf form holds frames in its buffer and writes them a
 * buffer at a time, not a write() per page: frames of a page each stay off
 * the disk until a flush (or until the buffer is full), then arrive whole
 * and in order, and what is on disk is what is counted. A frame larger than
 * the buffer is whole on disk after a flush.
 *
 * The frames go to a temporary file beside the path; the close renames it
 * to the path once the daemon streamed (an event after the Welcome), and
 * otherwise removes it, leaving what the path held as it was.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "recording.h"
#include "wire.h"

/* A frame as the tap sees it: the length varint, then a payload whose bytes say where they are. */
static size_t make_frame(uint8_t *f, size_t payload, unsigned int seq)
{
	size_t n = rt_wire_varint_encode(payload, f);

	for (size_t i = 0; i < payload; i++)
		f[n + i] = (uint8_t)(seq * 31 + i);
	return n + payload;
}

static off_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : st.st_size;
}

/* An event after the Welcome: the daemon streams. */
static void streamed(struct recording *r)
{
	Ringtap__Heartbeat hb = RINGTAP__HEARTBEAT__INIT;
	struct ringtap_event ev = { .kind = RINGTAP_HEARTBEAT, .heartbeat = &hb };

	CHECK(recording_event(r, &ev));
}

static void test_buffered(const char *path)
{
	static uint8_t frame[8192], back[64 * 8192];
	struct recording r;
	size_t len = 0, total = 0;
	int fd;

	CHECK_EQ(recording_open(&r, path, false), 0);
	/* Beside the path, in its directory. */
	CHECK(r.tmp_path && !strncmp(r.tmp_path, "/tmp/.test-recording.", 21));
	path = strdup(r.tmp_path);
	CHECK(path != NULL);
	/* 40 frames of a page: 160 KiB, less than the buffer. */
	for (unsigned int i = 0; i < 40; i++) {
		len = make_frame(frame, 4096 + 40, i);
		recording_tap_bytes(&r, frame, len);
		total += len;
	}
	CHECK_EQ(file_size(path), 0);
	CHECK_EQ(r.frames, 0);
	recording_flush(&r);
	CHECK_EQ(file_size(path), total);
	CHECK_EQ(r.frames, 40);
	CHECK_EQ(r.bytes, total);

	/* The frames come back as they went in, in order. */
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(read(fd, back, sizeof(back)), total);
	close(fd);
	for (unsigned int i = 0; i < 40; i++) {
		make_frame(frame, 4096 + 40, i);
		CHECK(!memcmp(back + i * len, frame, len));
	}
	streamed(&r);
	CHECK_EQ(recording_finish(&r), 0);
	CHECK_EQ(file_size(r.path), 0);
	CHECK_EQ(recording_close(&r), 0);
	/* Renamed into place: the path holds it, the temporary name is gone. */
	CHECK_EQ(file_size(r.path), total);
	CHECK_EQ(file_size(path), -1);
	free((void *)path);
}

/* Larger than the buffer: after a flush it is on disk whole, with what came after it. */
static void test_large_frame(const char *path)
{
	size_t big = 600u << 10, len, small_len;
	uint8_t *frame = malloc(big + 16), small[256];
	struct recording r;

	CHECK(frame != NULL);
	if (!frame)
		return;
	CHECK_EQ(recording_open(&r, path, false), 0);
	len = make_frame(frame, big, 1);
	recording_tap_bytes(&r, frame, len);
	small_len = make_frame(small, 100, 2);
	recording_tap_bytes(&r, small, small_len);
	recording_flush(&r);
	CHECK_EQ(file_size(r.tmp_path), len + small_len);
	CHECK_EQ(r.frames, 2);
	streamed(&r);
	CHECK_EQ(recording_close(&r), 0);
	CHECK_EQ(file_size(path), len + small_len);
	free(frame);
}

/* Frames came (a Welcome, a Refusal) but no event: what the path held stays, byte for byte. */
static void test_not_streamed(const char *path, bool tracedat)
{
	static const char earlier[] = "an earlier recording";
	uint8_t frame[64], back[64] = "";
	struct recording r;
	char *tmp;
	int fd = open(path, O_WRONLY | O_TRUNC);

	CHECK(fd >= 0);
	CHECK_EQ(write(fd, earlier, sizeof(earlier)), sizeof(earlier));
	close(fd);
	CHECK_EQ(recording_open(&r, path, tracedat), 0);
	recording_tap_bytes(&r, frame, make_frame(frame, 40, 3));
	recording_flush(&r);
	tmp = strdup(r.tmp_path);
	CHECK_EQ(recording_close(&r), 0);
	CHECK_EQ(file_size(tmp), -1);
	fd = open(path, O_RDONLY);
	CHECK_EQ(read(fd, back, sizeof(back)), sizeof(earlier));
	close(fd);
	CHECK(!memcmp(back, earlier, sizeof(earlier)));
	free(tmp);
}

int main(void)
{
	char path[] = "/tmp/test-recording.XXXXXX";
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return check_exit("recording");
	close(fd);
	test_buffered(path);
	test_large_frame(path);
	test_not_streamed(path, false);
	test_not_streamed(path, true);
	unlink(path);
	return check_exit("recording");
}
