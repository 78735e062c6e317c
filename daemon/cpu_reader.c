// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/vfs.h>

#include <linux/magic.h>
#include <unistd.h>

#include <tracefs/tracefs.h>

#include "cpu_reader.h"
#include "subscriber.h"
#include "tracefs.h"

int rt_cpu_online(int cpu)
{
	char path[64], c = '1';
	int fd, ret = 1;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 1 : -errno;
	if (read(fd, &c, 1) != 1)
		ret = -EIO;
	else
		ret = c == '1';
	close(fd);
	return ret;
}

int rt_cpu_reader_open(struct rt_cpu_reader *r, struct rt_session *s, int cpu,
		       unsigned int sub_buffer_size)
{
	char path[64];
	struct statfs st;
	int fd;

	r->cpu = cpu;
	r->eof = false;
	r->pages = r->bytes = 0;
	snprintf(path, sizeof(path), "per_cpu/cpu%d/trace_pipe_raw", cpu);
	/* One a previous ringtapd handed over keeps its half-read page: a new open would lose it. */
	fd = rt_session_take_trace_fd(s, cpu);
	if (fd < 0)
		fd = tracefs_instance_file_open(rt_session_instance(s), path, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return errno ? -errno : -ENOENT;
	/*
	 * libtracefs reports "no data" as 0, like an end of file: tell a live
	 * buffer from a captured file by the file system it lives on.
	 */
	if (fstatfs(fd, &st)) {
		close(fd);
		return -errno;
	}
	r->is_file = st.f_type != TRACEFS_MAGIC && st.f_type != DEBUGFS_MAGIC;
	r->buf_size = sub_buffer_size;
	r->buf = rt_page_buf_new(r->buf_size);
	r->tcpu = r->buf ? tracefs_cpu_alloc_fd(fd, (int)sub_buffer_size, true) : NULL;
	if (!r->tcpu) {
		rt_page_buf_put(r->buf);
		r->buf = NULL;
		close(fd);
		return -ENOMEM;
	}
	r->fd = fd;
	return 0;
}

void rt_cpu_reader_close(struct rt_cpu_reader *r)
{
	if (r->tcpu) {
		tracefs_cpu_free_fd(r->tcpu);
		close(r->fd);
	}
	r->tcpu = NULL;
	rt_page_buf_put(r->buf);
	r->buf = NULL;
}

int rt_cpu_reader_drain(struct rt_cpu_reader *r, unsigned int max_pages, rt_page_fn fn,
			void *ctx)
{
	int n = 0;

	while (!r->eof && (!max_pages || (unsigned int)n < max_pages)) {
		int len, ret;

		r->out_of_memory = !r->buf && !(r->buf = rt_page_buf_new(r->buf_size));
		if (r->out_of_memory)
			break;
		errno = 0;
		len = tracefs_cpu_read(r->tcpu, r->buf->data, true);
		if (len < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == EINTR)
				continue;
			return errno ? -errno : -EIO;
		}
		if (len == 0) {
			r->eof = r->is_file;
			break;
		}
		r->pages++;
		r->bytes += (unsigned int)len;
		n++;
		ret = fn(r->cpu, r->buf, (unsigned int)len, ctx);
		/* Queued by reference: the next page goes into a buffer of its own. */
		if (r->buf->refs > 1) {
			rt_page_buf_put(r->buf);
			r->buf = NULL;
		}
		if (ret)
			return ret;
	}
	return n;
}
