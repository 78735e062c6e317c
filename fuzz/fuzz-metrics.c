// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The metrics' untrusted bytes: an HTTP request as the exporter reads it
 * from whoever reaches its port (first byte even), or a daemon's frame as
 * ringtap status unpacks it, a Status put in every text format (odd).
 */
#include <stdlib.h>

#include "encode.h"
#include "metrics.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum rt_metrics_format f;
	Ringtap__Frame *frame;
	bool head;

	if (!size)
		return 0;
	if (!(data[0] & 1)) {
		(void)rt_metrics_http_request((const char *)data + 1, size - 1, &f, &head);
		return 0;
	}
	frame = ringtap__frame__unpack(NULL, size - 1, data + 1);
	if (!frame)
		return 0;
	if (frame->msg_case == RINGTAP__FRAME__MSG_STATUS)
		for (f = RT_METRICS_TABLE; f <= RT_METRICS_OPENMETRICS; f++) {
			struct rt_buf b = { 0 };

			(void)rt_metrics_format(frame->status, f, &b);
			rt_buf_free(&b);
		}
	ringtap__frame__free_unpacked(frame, NULL);
	return 0;
}
