// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The protocol's messages as bytes: the buffer they are written into,
 * every frame but the records themselves (encode-record.c), and Batch and
 * Pages frames built as a head and a tail around bytes already held.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "encode.h"

bool rt_encode_selected(const char *const *only, const char *name)
{
	if (!only)
		return true;
	for (; *only; only++)
		if (!strcmp(*only, name))
			return true;
	return false;
}
#include "wire.h"

/* protobuf field tags: (number << 3) | wire type; 2 is length-delimited. */
/* Batch and Fixed share their shape: cpu = 1, records = 2 (encode-record.c). */
#define TAG_BATCH_CPU		((1 << 3) | 0)
#define TAG_PAGES_CPU		((1 << 3) | 0)
#define TAG_PAGES_PAGES		((2 << 3) | 2)
#define TAG_PAGES_RECORDS	((3 << 3) | 0)
#define TAG_PAGES_FIRST_SEQ	((4 << 3) | 0)
#define FRAME_TAG(kind)		(((unsigned int)(kind) << 3) | 2)

int rt_buf_grow(struct rt_buf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 256;
	uint8_t *d;

	if (b->len + n <= b->cap)
		return 0;
	while (cap < b->len + n)
		cap *= 2;
	d = realloc(b->data, cap);
	if (!d)
		return -ENOMEM;
	b->data = d;
	b->cap = cap;
	return 0;
}

int rt_buf_put(struct rt_buf *b, const void *p, size_t n)
{
	int ret = rt_buf_reserve(b, n);

	if (ret)
		return ret;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

int rt_buf_put_varint(struct rt_buf *b, uint64_t v)
{
	uint8_t tmp[RT_WIRE_VARINT_MAX];

	return rt_buf_put(b, tmp, rt_wire_varint_encode(v, tmp));
}

void rt_buf_free(struct rt_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

static int put_frame(const Ringtap__Frame *frame, struct rt_buf *out)
{
	uint8_t *bytes;
	size_t len;
	int ret = rt_wire_encode(frame, &bytes, &len);

	if (ret)
		return ret;
	ret = rt_buf_put(out, bytes, len);
	free(bytes);
	return ret;
}

static void put_edge(uint8_t *edge, size_t *len, uint64_t v)
{
	*len += rt_wire_varint_encode(v, edge + *len);
}

static void parts_done(struct rt_frame_parts *out, const void *bulk, size_t bulk_len,
		       size_t head_len, size_t tail_len)
{
	out->n = 0;
	out->iov[out->n++] = (struct iovec){ out->head, head_len };
	if (bulk_len)
		out->iov[out->n++] = (struct iovec){ (void *)bulk, bulk_len };
	if (tail_len)
		out->iov[out->n++] = (struct iovec){ out->tail, tail_len };
	out->len = head_len + bulk_len + tail_len;
}

int rt_encode_batch_parts(Ringtap__Frame__MsgCase kind, unsigned int cpu,
			  const struct rt_buf *records, struct rt_frame_parts *out)
{
	uint8_t tmp[RT_WIRE_VARINT_MAX];
	size_t batch_len = 1 + rt_wire_varint_encode(cpu, tmp) + records->len;
	size_t frame_len = rt_wire_varint_encode(FRAME_TAG(kind), tmp) +
			   rt_wire_varint_encode(batch_len, tmp) + batch_len;
	size_t head = 0;

	if (frame_len > RT_WIRE_MAX_FRAME_DEFAULT)
		return -EMSGSIZE;
	put_edge(out->head, &head, frame_len);
	put_edge(out->head, &head, FRAME_TAG(kind));
	put_edge(out->head, &head, batch_len);
	put_edge(out->head, &head, TAG_BATCH_CPU);
	put_edge(out->head, &head, cpu);
	parts_done(out, records->data, records->len, head, 0);
	return 0;
}

/*
 * By hand for the same reason as records: a page per read is the raw hot path.
 * Fields in number order as protobuf-c packs them (test-encode compares).
 */
int rt_encode_pages_parts(unsigned int cpu, const uint8_t *page, size_t len, unsigned int records,
			  uint64_t first_seq, struct rt_frame_parts *out)
{
	uint8_t tmp[RT_WIRE_VARINT_MAX];
	size_t pages_len = 1 + rt_wire_varint_encode(cpu, tmp) +
			   1 + rt_wire_varint_encode(len, tmp) + len +
			   1 + rt_wire_varint_encode(records, tmp) +
			   (first_seq ? 1 + rt_wire_varint_encode(first_seq, tmp) : 0);
	size_t frame_len = rt_wire_varint_encode(FRAME_TAG(RINGTAP__FRAME__MSG_PAGES), tmp) +
			   rt_wire_varint_encode(pages_len, tmp) + pages_len;
	size_t head = 0, tail = 0;

	if (frame_len > RT_WIRE_MAX_FRAME_DEFAULT)
		return -EMSGSIZE;
	put_edge(out->head, &head, frame_len);
	put_edge(out->head, &head, FRAME_TAG(RINGTAP__FRAME__MSG_PAGES));
	put_edge(out->head, &head, pages_len);
	put_edge(out->head, &head, TAG_PAGES_CPU);
	put_edge(out->head, &head, cpu);
	put_edge(out->head, &head, TAG_PAGES_PAGES);
	put_edge(out->head, &head, len);
	put_edge(out->tail, &tail, TAG_PAGES_RECORDS);
	put_edge(out->tail, &tail, records);
	if (first_seq) {
		put_edge(out->tail, &tail, TAG_PAGES_FIRST_SEQ);
		put_edge(out->tail, &tail, first_seq);
	}
	parts_done(out, page, len, head, tail);
	return 0;
}

int rt_encode_schema_frame(const struct tep_event *ev, const unsigned int *offsets,
			   const char *format, const char *const *only, struct rt_buf *out)
{
	Ringtap__Frame frame = RINGTAP__FRAME__INIT;
	Ringtap__Schema schema = RINGTAP__SCHEMA__INIT;
	Ringtap__Field *fields, **ptrs;
	unsigned int n = 0, i = 0;
	int ret;

	for (struct tep_format_field *f = ev->format.fields; f; f = f->next)
		n++;
	fields = calloc(n + 1, sizeof(*fields));
	ptrs = calloc(n + 1, sizeof(*ptrs));
	if (!fields || !ptrs) {
		free(fields);
		free(ptrs);
		return -ENOMEM;
	}
	unsigned int k = 0;

	for (struct tep_format_field *f = ev->format.fields; f; f = f->next, k++) {
		if (!rt_encode_selected(only, f->name))
			continue;
		ringtap__field__init(&fields[i]);
		fields[i].name = f->name;
		fields[i].type = f->type;
		fields[i].offset = offsets ? offsets[k] : (uint32_t)f->offset;
		fields[i].size = (uint32_t)f->size;
		fields[i].has_is_signed = true;
		fields[i].is_signed = f->flags & TEP_FIELD_IS_SIGNED;
		fields[i].has_array_len = f->flags & TEP_FIELD_IS_ARRAY;
		fields[i].array_len = (uint32_t)f->arraylen;
		fields[i].has_dynamic = true;
		fields[i].dynamic = f->flags & TEP_FIELD_IS_DYNAMIC;
		ptrs[i] = &fields[i];
		i++;
	}
	n = i;
	schema.event_id = (uint32_t)ev->id;
	schema.system = ev->system;
	schema.name = ev->name;
	schema.n_fields = n;
	schema.fields = ptrs;
	schema.format = (char *)format;
	frame.msg_case = RINGTAP__FRAME__MSG_SCHEMA;
	frame.schema = &schema;
	ret = put_frame(&frame, out);
	free(fields);
	free(ptrs);
	return ret;
}

int rt_encode_lost_frame(unsigned int cpu, Ringtap__LossSource source, const struct rt_loss *loss,
			 struct rt_buf *out)
{
	Ringtap__Frame frame = RINGTAP__FRAME__INIT;
	Ringtap__Lost lost = RINGTAP__LOST__INIT;

	lost.cpu = cpu;
	lost.count = loss->count;
	lost.source = source;
	lost.has_first_ns = loss->first_ts != 0;
	lost.first_ns = loss->first_ts;
	lost.has_last_ns = loss->last_ts != 0;
	lost.last_ns = loss->last_ts;
	lost.has_count_exact = true;
	lost.count_exact = loss->exact;
	frame.msg_case = RINGTAP__FRAME__MSG_LOST;
	frame.lost = &lost;
	return put_frame(&frame, out);
}

static void field_desc(Ringtap__Field *f, const struct rt_field_desc *d)
{
	ringtap__field__init(f);
	f->name = (char *)d->name;
	f->type = (char *)d->type;
	f->offset = d->offset;
	f->size = d->size;
	f->has_is_signed = true;
	f->is_signed = d->is_signed;
}

int rt_encode_welcome_frame(uint32_t version, Ringtap__Encoding encoding,
			    const struct rt_host *host, const struct rt_layout *l,
			    struct rt_buf *out)
{
	return rt_encode_welcome_resume_frame(version, encoding, host, l, NULL, out);
}

int rt_encode_welcome_resume_frame(uint32_t version, Ringtap__Encoding encoding,
				   const struct rt_host *host, const struct rt_layout *l,
				   const struct rt_welcome_resume *resume, struct rt_buf *out)
{
	Ringtap__Frame frame = RINGTAP__FRAME__INIT;
	Ringtap__Welcome w = RINGTAP__WELCOME__INIT;
	Ringtap__Layout lay = RINGTAP__LAYOUT__INIT;
	Ringtap__Field page[3], *page_ptrs[3], *common, **common_ptrs;
	int ret;

	common = calloc(l->n_common + 1, sizeof(*common));
	common_ptrs = calloc(l->n_common + 1, sizeof(*common_ptrs));
	if (!common || !common_ptrs) {
		free(common);
		free(common_ptrs);
		return -ENOMEM;
	}
	field_desc(&page[0], &l->page_timestamp);
	field_desc(&page[1], &l->page_commit);
	field_desc(&page[2], &l->page_data);
	for (int i = 0; i < 3; i++)
		page_ptrs[i] = &page[i];
	for (unsigned int i = 0; i < l->n_common; i++) {
		field_desc(&common[i], &l->common[i]);
		common_ptrs[i] = &common[i];
	}
	lay.header_page = l->header_page;
	lay.header_event = l->header_event;
	lay.n_page_fields = 3;
	lay.page_fields = page_ptrs;
	lay.n_common_fields = l->n_common;
	lay.common_fields = common_ptrs;
	lay.sub_buffer_size = l->sub_buffer_size;
	lay.long_size = l->long_size;
	lay.big_endian = l->big_endian;
	w.version = version;
	w.encoding = encoding;
	w.hostname = (char *)host->hostname;
	w.kernel_release = (char *)host->kernel_release;
	w.boot_id = (char *)host->boot_id;
	w.cpus = host->cpus;
	w.trace_clock = (char *)host->trace_clock;
	w.layout = &lay;
	if (resume) {
		w.has_resume_token = true;
		w.resume_token.data = (uint8_t *)resume->token;
		w.resume_token.len = resume->token_len;
		w.n_start_seq = resume->n_start_seq;
		w.start_seq = (uint64_t *)resume->start_seq;
	}
	frame.msg_case = RINGTAP__FRAME__MSG_WELCOME;
	frame.welcome = &w;
	ret = put_frame(&frame, out);
	free(common);
	free(common_ptrs);
	return ret;
}

int rt_encode_heartbeat_frame(uint64_t trace_clock_ns, uint64_t realtime_ns, struct rt_buf *out)
{
	Ringtap__Frame frame = RINGTAP__FRAME__INIT;
	Ringtap__Heartbeat hb = RINGTAP__HEARTBEAT__INIT;

	hb.trace_clock_ns = trace_clock_ns;
	hb.realtime_ns = realtime_ns;
	frame.msg_case = RINGTAP__FRAME__MSG_HEARTBEAT;
	frame.heartbeat = &hb;
	return put_frame(&frame, out);
}

int rt_encode_host_texts_frame(const struct rt_host_texts *t, struct rt_buf *out)
{
	Ringtap__Frame frame = RINGTAP__FRAME__INIT;
	Ringtap__HostTexts h = RINGTAP__HOST_TEXTS__INIT;

	h.has_kallsyms = t->kallsyms != NULL;
	h.kallsyms.data = (uint8_t *)t->kallsyms;
	h.kallsyms.len = t->kallsyms_len;
	h.has_printk_formats = t->printk_formats != NULL;
	h.printk_formats.data = (uint8_t *)t->printk_formats;
	h.printk_formats.len = t->printk_formats_len;
	h.has_saved_cmdlines = t->saved_cmdlines != NULL;
	h.saved_cmdlines.data = (uint8_t *)t->saved_cmdlines;
	h.saved_cmdlines.len = t->saved_cmdlines_len;
	frame.msg_case = RINGTAP__FRAME__MSG_HOST_TEXTS;
	frame.host_texts = &h;
	return put_frame(&frame, out);
}

int rt_encode_bye_frame(struct rt_buf *out)
{
	Ringtap__Frame frame = RINGTAP__FRAME__INIT;
	Ringtap__Bye bye = RINGTAP__BYE__INIT;

	frame.msg_case = RINGTAP__FRAME__MSG_BYE;
	frame.bye = &bye;
	return put_frame(&frame, out);
}

int rt_encode_cpu_state_frame(unsigned int cpu, bool online, struct rt_buf *out)
{
	Ringtap__Frame frame = RINGTAP__FRAME__INIT;
	Ringtap__CpuState st = RINGTAP__CPU_STATE__INIT;

	st.cpu = cpu;
	st.online = online;
	frame.msg_case = RINGTAP__FRAME__MSG_CPU_STATE;
	frame.cpu_state = &st;
	return put_frame(&frame, out);
}

int rt_encode_ring_frame(const Ringtap__Ring *ring, struct rt_buf *out)
{
	Ringtap__Frame frame = RINGTAP__FRAME__INIT;

	frame.msg_case = RINGTAP__FRAME__MSG_RING;
	frame.ring = (Ringtap__Ring *)ring;
	return put_frame(&frame, out);
}

int rt_encode_ring_ready_frame(const Ringtap__RingReady *ready, struct rt_buf *out)
{
	Ringtap__Frame frame = RINGTAP__FRAME__INIT;

	frame.msg_case = RINGTAP__FRAME__MSG_RING_READY;
	frame.ring_ready = (Ringtap__RingReady *)ready;
	return put_frame(&frame, out);
}

int rt_encode_status_frame(const Ringtap__Status *st, struct rt_buf *out)
{
	Ringtap__Frame frame = RINGTAP__FRAME__INIT;

	frame.msg_case = RINGTAP__FRAME__MSG_STATUS;
	frame.status = (Ringtap__Status *)st;
	return put_frame(&frame, out);
}

int rt_encode_refusal_frame(Ringtap__RefusalReason reason, const char *text, struct rt_buf *out)
{
	Ringtap__Frame frame = RINGTAP__FRAME__INIT;
	Ringtap__Refusal r = RINGTAP__REFUSAL__INIT;

	r.reason = reason;
	r.text = (char *)text;
	frame.msg_case = RINGTAP__FRAME__MSG_REFUSAL;
	frame.refusal = &r;
	return put_frame(&frame, out);
}

int rt_encode_error_frame(int err, const char *text, struct rt_buf *out)
{
	Ringtap__Frame frame = RINGTAP__FRAME__INIT;
	Ringtap__Error e = RINGTAP__ERROR__INIT;

	e.code = (uint32_t)(err < 0 ? -err : err);
	e.text = (char *)text;
	frame.msg_case = RINGTAP__FRAME__MSG_ERROR;
	frame.error = &e;
	return put_frame(&frame, out);
}

/* The length-delimited field that starts at p (after its tag): its bytes. */
static int take_delimited(const uint8_t *p, size_t len, const uint8_t **inner, size_t *inner_len)
{
	uint64_t n;
	int used = rt_wire_varint_decode(p, len, &n);

	if (used <= 0 || n > len - (size_t)used)
		return -EINVAL;
	*inner = p + used;
	*inner_len = (size_t)n;
	return 0;
}

int rt_encode_inner(const struct rt_buf *encoded, bool delimited, const uint8_t **msg,
		    size_t *len)
{
	const uint8_t *p = encoded->data;
	size_t n = encoded->len;

	if (delimited && take_delimited(p, n, &p, &n))
		return -EINVAL;
	/* Every Frame and Batch field we wrap has a number under 16: a one-byte tag. */
	if (n < 1 || (p[0] & 7) != 2 || (p[0] & 0x80))
		return -EINVAL;
	return take_delimited(p + 1, n - 1, msg, len);
}

int rt_encode_published(const struct rt_published_head *h, Ringtap__Published__MsgCase kind,
			const uint8_t *msg, size_t len, struct rt_buf *out)
{
	size_t id_len = strlen(h->boot_id);
	int ret;

	ret = rt_buf_put_varint(out, (1 << 3) | 2) ?: rt_buf_put_varint(out, id_len) ?:
	      rt_buf_put(out, h->boot_id, id_len) ?:
	      rt_buf_put_varint(out, (2 << 3) | 0) ?: rt_buf_put_varint(out, h->session) ?:
	      rt_buf_put_varint(out, (3 << 3) | 0) ?: rt_buf_put_varint(out, h->cpu) ?:
	      rt_buf_put_varint(out, (4 << 3) | 0) ?: rt_buf_put_varint(out, h->seq) ?:
	      rt_buf_put_varint(out, ((unsigned int)kind << 3) | 2) ?:
	      rt_buf_put_varint(out, len);
	return ret ?: rt_buf_put(out, msg, len);
}
