// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "conn_io.h"
#include "subscriber.h"
#include "tls.h"

void conn_want_write(struct rt_conn *c, bool on)
{
	/*
	 * Once the peer ended its side there is nothing to read: its end of
	 * input (level-triggered) would wake us for nothing until what it is
	 * owed is out. Fails only for a source already gone.
	 */
	uint32_t in = c->peer_shut ? 0 : EPOLLIN;

	(void)sd_event_source_set_io_events(c->io, in | (on ? EPOLLOUT : 0));
}

/* recv() or its TLS equivalent: n > 0, 0 at the end, -EAGAIN, -errno. */
ssize_t conn_read(struct rt_conn *c, void *buf, size_t len)
{
	ssize_t n;

	if (c->tls)
		return rt_tls_read(c->tls, buf, len);
	n = recv(c->fd, buf, len, MSG_DONTWAIT);
	return n >= 0 ? n : (errno == EAGAIN || errno == EINTR) ? -EAGAIN : -errno;
}

/*
 * Frames queued at once go out in one call: a page per send() is most of a
 * raw stream's cost. A page's frame is three pieces (its page is shared).
 */
#define PIECES_PER_WRITE 192

/*
 * Writes what the queue holds: a gather of its frames with one sendmsg, or
 * through TLS the head frame (a retry after -EAGAIN must offer TLS the same
 * bytes again). n > 0, -EAGAIN, -errno.
 */
static ssize_t conn_write_queue(struct rt_conn *c)
{
	struct iovec iov[PIECES_PER_WRITE];
	struct msghdr msg = { .msg_iov = iov };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} control;
	ssize_t n;

	msg.msg_iovlen = rt_subscriber_peekv(&c->out.sub, iov, c->tls ? 1 : PIECES_PER_WRITE);
	if (c->tls)
		return rt_tls_write(c->tls, iov[0].iov_base, iov[0].iov_len);
	if (c->pass_fd >= 0 && c->pass_fd_at) {
		/* Up to the byte the descriptor goes with: a stream keeps it with the send that starts there. */
		size_t left = c->pass_fd_at;

		for (size_t i = 0; i < msg.msg_iovlen; i++) {
			if (iov[i].iov_len >= left) {
				iov[i].iov_len = left;
				msg.msg_iovlen = i + 1;
				break;
			}
			left -= iov[i].iov_len;
		}
	} else if (c->pass_fd >= 0) {
		struct cmsghdr *cm;

		/* The header's padding too: the kernel reads every byte of msg_controllen. */
		memset(&control, 0, sizeof(control));
		msg.msg_control = control.buf;
		msg.msg_controllen = sizeof(control.buf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &c->pass_fd, sizeof(int));
	}
	n = sendmsg(c->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? -EAGAIN : -errno;
	if (c->pass_fd >= 0 && !c->pass_fd_at)
		c->pass_fd = -1;	/* it went with the first byte written */
	else if (c->pass_fd >= 0)
		c->pass_fd_at -= (size_t)n;
	return n;
}

const char *conn_error(struct rt_conn *c, ssize_t err)
{
	return c->tls ? rt_tls_conn_error(c->tls) : strerror((int)-err);
}

/*
 * A closing connection reads on only to find the peer's end, not frames:
 * a close() with bytes unread would reset the link and lose our last frame.
 */
void conn_discard_input(struct rt_conn *c)
{
	uint8_t buf[4096];
	ssize_t n = -EAGAIN;

	for (unsigned int reads = 0; reads < READS_PER_TURN; reads++)
		if ((n = conn_read(c, buf, sizeof(buf))) <= 0)
			break;
	if (n != -EAGAIN && n <= 0) {
		c->peer_shut = true;
		conn_want_write(c, true);
	}
}

int conn_flush(struct rt_conn *c)
{
	for (;;) {
		ssize_t n;

		if (!rt_subscriber_queued_any(&c->out.sub)) {
			/* Drained: report what was dropped meanwhile, then rest. */
			if (rt_subscriber_flush_losses(&c->out.sub) == 0 && rt_subscriber_queued_any(&c->out.sub))
				continue;
			conn_want_write(c, false);
			return 0;
		}
		n = conn_write_queue(c);
		if (n == -EAGAIN) {
			conn_want_write(c, true);
			/*
			 * TLS may have sealed part of the head into a record that waits
			 * for room: the retry must offer the same bytes, so a stop's
			 * abandon must keep that frame.
			 */
			rt_subscriber_head_held(&c->out.sub, c->tls != NULL);
			return 1;
		}
		if (n < 0)
			return (int)n;
		rt_subscriber_head_held(&c->out.sub, false);
		rt_subscriber_consume(&c->out.sub, (size_t)n);
	}
}
