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
#include "page_ring.h"
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
		       struct rt_page_ring *ring, unsigned int sub_buffer_size)
{
	char path[64];
	struct statfs st;
	int fd;

	r->cpu = cpu;
	r->eof = false;
	r->pages = r->bytes = 0;
	snprintf(path, sizeof(path), "per_cpu/cpu%d/trace_pipe_raw", cpu);
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
	r->ring = ring;
	r->tcpu = tracefs_cpu_alloc_fd(fd, (int)sub_buffer_size, true);
	if (!r->tcpu) {
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
}

int rt_cpu_reader_drain(struct rt_cpu_reader *r, unsigned int max_pages, rt_page_fn fn,
			void *ctx)
{
	int n = 0;

	while (!r->eof && (!max_pages || (unsigned int)n < max_pages)) {
		struct rt_page_buf *page = rt_page_ring_begin(r->ring, (unsigned int)r->cpu);
		int len, ret, err;

		r->out_of_memory = !page;
		if (!page)
			break;
		errno = 0;
		len = tracefs_cpu_read(r->tcpu, page->data, true);
		err = errno;
		if (len <= 0)
			rt_page_ring_abort(r->ring, (unsigned int)r->cpu);
		if (len < 0) {
			if (err == EAGAIN || err == EWOULDBLOCK)
				break;
			if (err == EINTR)
				continue;
			return err ? -err : -EIO;
		}
		if (len == 0) {
			r->eof = r->is_file;
			break;
		}
		r->pages++;
		r->bytes += (unsigned int)len;
		n++;
		page->len = (unsigned int)len;
		ret = fn(r->cpu, page, (unsigned int)len, ctx);
		if (ret)
			return ret;
	}
	return n;
}
