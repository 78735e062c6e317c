/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * metrics: ringtapd's counters (a Status frame's message) as text: a table
 * for people (`ringtap status`), Prometheus' text format 0.0.4, or
 * OpenMetrics 1.0.0; and what an HTTP scrape asked for. The names, types
 * and labels are listed in ringtapd(8). Pure: a message in, bytes out.
 */
#include <stdbool.h>
#include <stddef.h>

#include "encode.h"
#include "ringtap.pb-c.h"

enum rt_metrics_format {
	RT_METRICS_TABLE,
	RT_METRICS_PROMETHEUS,		/* text/plain; version=0.0.4 */
	RT_METRICS_OPENMETRICS,		/* application/openmetrics-text; version=1.0.0 */
};

/* Appends st as text in that format to out; 0 or -ENOMEM. */
int rt_metrics_format(const Ringtap__Status *st, enum rt_metrics_format format,
		      struct rt_buf *out);

/* The Content-Type of a format's text (the table is plain text). */
const char *rt_metrics_content_type(enum rt_metrics_format format);

/*
 * An HTTP/1.x request's head (up to the blank line; len bytes, no NUL
 * needed): 0 for a GET or HEAD (*head true) of any path, -EINVAL for no
 * request line, -EOPNOTSUPP for another method. *format is OpenMetrics
 * when an Accept header names application/openmetrics-text, as
 * Prometheus' scrapes do, else Prometheus' text format.
 */
int rt_metrics_http_request(const char *req, size_t len, enum rt_metrics_format *format,
			    bool *head);
