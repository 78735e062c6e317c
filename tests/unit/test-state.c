// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The restart state: what is written is read back field for field, a
 * state cut at any length or naming more CPUs or subscribers than it holds
 * is refused with a reason, as are another version and another file, and
 * a record a later release made longer is still read, and so is the first
 * release's state (no page ring, no transports).
 */
#include "check.h"
#include "state.h"

static const uint8_t subscription[] = { 0x0a, 0x03, 'a', ':', 'b' };
static const uint8_t schemas[] = { 0x05, 0x80 };
static const uint8_t unsent[] = { 1, 2, 3, 4, 5, 6, 7 };
/* Catching up: cpu0 after seq 258, cpu1 after 5 (little endian). */
static const uint8_t catch_up[16] = { 2, 1, 0, 0, 0, 0, 0, 0, 5 };

static void sample(struct rt_state *st, struct rt_state_cpu *cpus, struct rt_state_sub *subs)
{
	cpus[0] = (struct rt_state_cpu){ 10, 1000, 3, { 41, 5003, 3, 1, 2 }, 4, 1 };
	cpus[1] = (struct rt_state_cpu){ 20, 2000, 0, { 77, 2000, 0, 0, 0 }, 0, 0 };
	subs[0] = (struct rt_state_sub){
		.id = 7, .encoding = 1, .version = 1, .uid = 1000, .pid = 4242, .latency_ms = 50,
		.name = "ringtap stream", .owner = "uid 1000",
		.subscription = subscription, .subscription_len = sizeof(subscription),
		.schema_sent = schemas, .schema_sent_len = sizeof(schemas), .raw_schemas = 0,
		.delivered = 12345, .dropped = 6, .kernel_lost = 2,
		.unsent = unsent, .unsent_len = sizeof(unsent), .numbered = true,
	};
	subs[1] = (struct rt_state_sub){ .id = 9, .encoding = 2, .name = "raw", .owner = "",
					 .transport = RT_STATE_TRANSPORT_RING,
					 .catch_up = catch_up, .catch_up_len = sizeof(catch_up) };
	*st = (struct rt_state){ .instance = "ringtap", .clock = "mono", .buffer_kb = 4096,
				 .ncpus = 2, .cpus = cpus, .n_subs = 2, .subs = subs,
				 .ring_slots = 96, .ring_page_size = 4096 };
}

/* The sample with its first ncpus CPUs and n_subs subscribers, written. */
static void write_sample(struct rt_buf *b, uint32_t ncpus, uint32_t n_subs)
{
	struct rt_state_cpu cpus[2];
	struct rt_state_sub subs[2];
	struct rt_state st;

	sample(&st, cpus, subs);
	st.ncpus = ncpus;
	st.n_subs = n_subs;
	CHECK_EQ(rt_state_write(&st, b), 0);
}

static void round_trip(void)
{
	struct rt_state got;
	struct rt_buf b = { 0 };
	struct rt_why why = { "" };

	/* No one catching up: the first version, which every release reads. */
	write_sample(&b, 2, 1);
	CHECK_EQ(rt_state_read(b.data, b.len, &got, &why), 0);
	CHECK_EQ(got.version, RT_STATE_VERSION);
	rt_state_release(&got);
	rt_buf_free(&b);
	/* One catching up: a version a release without catch-up places refuses. */
	write_sample(&b, 2, 2);
	CHECK_EQ(rt_state_read(b.data, b.len, &got, &why), 0);
	CHECK_EQ(got.version, RT_STATE_VERSION_CATCH_UP);
	CHECK_STR(got.instance, "ringtap");
	CHECK_STR(got.clock, "mono");
	CHECK_EQ(got.buffer_kb, 4096);
	CHECK_EQ(got.ncpus, 2);
	CHECK_EQ(got.n_subs, 2);
	if (got.ncpus == 2 && got.n_subs == 2) {
		CHECK_EQ(got.cpus[0].records, 1000);
		CHECK_EQ(got.cpus[0].kernel_lost, 3);
		CHECK_EQ(got.cpus[1].pages, 20);
		CHECK_EQ(got.cpus[0].ring.written, 41);
		CHECK_EQ(got.cpus[0].ring.events_before, 5003);
		CHECK_EQ(got.cpus[0].ring.kernel_lost, 3);
		CHECK_EQ(got.cpus[0].ring.kernel_inexact, 1);
		CHECK_EQ(got.cpus[0].ring.malformed, 2);
		CHECK_EQ(got.cpus[0].unknown, 4);
		CHECK_EQ(got.cpus[0].inexact_pages, 1);
		CHECK_EQ(got.cpus[1].ring.written, 77);
		CHECK_EQ(got.subs[0].transport, RT_STATE_TRANSPORT_SOCKET);
		CHECK_EQ(got.subs[1].transport, RT_STATE_TRANSPORT_RING);
		CHECK(got.subs[0].numbered && !got.subs[1].numbered);
		CHECK_EQ(got.subs[0].catch_up_len, 0);
		CHECK_EQ(got.subs[1].catch_up_len, sizeof(catch_up));
		CHECK(got.subs[1].catch_up && !memcmp(got.subs[1].catch_up, catch_up,
						      sizeof(catch_up)));
		CHECK_EQ(got.subs[0].id, 7);
		CHECK_EQ(got.subs[0].pid, 4242);
		CHECK_EQ(got.subs[0].latency_ms, 50);
		CHECK_STR(got.subs[0].name, "ringtap stream");
		CHECK_STR(got.subs[0].owner, "uid 1000");
		CHECK_EQ(got.subs[0].subscription_len, sizeof(subscription));
		CHECK(!memcmp(got.subs[0].subscription, subscription, sizeof(subscription)));
		CHECK_EQ(got.subs[0].schema_sent_len, sizeof(schemas));
		CHECK(!memcmp(got.subs[0].schema_sent, schemas, sizeof(schemas)));
		CHECK_EQ(got.subs[0].delivered, 12345);
		CHECK_EQ(got.subs[0].dropped, 6);
		CHECK_EQ(got.subs[0].unsent_len, sizeof(unsent));
		CHECK(!memcmp(got.subs[0].unsent, unsent, sizeof(unsent)));
		CHECK_EQ(got.subs[1].id, 9);
		CHECK_EQ(got.subs[1].encoding, 2);
		CHECK_STR(got.subs[1].owner, "");
		CHECK_EQ(got.subs[1].subscription_len, 0);
		CHECK_EQ(got.subs[1].unsent_len, 0);
	}
	CHECK_EQ(got.ring_slots, 96);
	CHECK_EQ(got.ring_page_size, 4096);
	rt_state_release(&got);

	/* Cut anywhere, it is refused, never read half. */
	for (size_t len = 0; len < b.len; len++) {
		int ret = rt_state_read(b.data, len, &got, &why);

		if (ret != -EINVAL)
			fprintf(stderr, "cut at %zu of %zu: %d\n", len, b.len, ret);
		CHECK_EQ(ret, -EINVAL);
	}
	rt_buf_free(&b);
}

/* The state kept from the start for a crash: no subscriber, the flag and the resume secret. */
static void crash_state(void)
{
	static const uint8_t secret[40] = "0123456789abcdefghijklmnopqrstuvwxyzABCD";
	struct rt_state_cpu cpus[2] = { 0 };
	struct rt_state st = { .instance = "ringtap", .clock = "local", .ncpus = 2, .cpus = cpus,
			       .ring_slots = 4096, .ring_page_size = 4096, .at_start = true,
			       .secret = secret, .secret_len = sizeof(secret) };
	struct rt_buf b = { 0 };
	struct rt_why why = { "" };
	struct rt_state got;

	CHECK_EQ(rt_state_write(&st, &b), 0);
	CHECK_EQ(rt_state_read(b.data, b.len, &got, &why), 0);
	CHECK(got.at_start);
	CHECK_EQ(got.secret_len, sizeof(secret));
	CHECK(got.secret && !memcmp(got.secret, secret, sizeof(secret)));
	CHECK_EQ(got.ring_slots, 4096);
	CHECK_EQ(got.n_subs, 0);
	rt_state_release(&got);
	rt_buf_free(&b);
}

static void refusals(void)
{
	struct rt_state got;
	struct rt_buf b = { 0 };
	struct rt_why why = { "" };

	write_sample(&b, 2, 2);
	/* Another release's version: refused, saying which. */
	b.data[8] = 3;
	CHECK_EQ(rt_state_read(b.data, b.len, &got, &why), -EPROTONOSUPPORT);
	CHECK_STR(why.text, "state version 3: this ringtapd reads versions 1 and 2 only");
	b.data[8] = 2;
	/* Not a state at all. */
	b.data[0] = 'X';
	CHECK_EQ(rt_state_read(b.data, b.len, &got, &why), -EINVAL);
	CHECK_STR(why.text, "not a ringtapd state");
	b.data[0] = 'R';
	rt_buf_free(&b);

	/* A count of subscribers the bytes cannot hold. */
	write_sample(&b, 2, 0);
	/*
	 * The count, then the ring's record (its length, slots, page size) and
	 * the crash record (its length, at_start, the secret's length: none).
	 */
	b.data[b.len - 28] = 0xff;
	b.data[b.len - 27] = 0xff;
	CHECK_EQ(rt_state_read(b.data, b.len, &got, &why), -EINVAL);
	CHECK_STR(why.text, "the state's subscriber count is damaged");
	rt_buf_free(&b);
}

/* A later release's longer CPU record: the extra bytes are skipped, what follows still read. */
static void longer_record(void)
{
	struct rt_state got;
	struct rt_buf b = { 0 }, longer = { 0 };
	struct rt_why why = { "" };
	/* magic, version, body length, "ringtap", "mono", buffer_kb, ncpus: cpu0's record after. */
	size_t cpu0 = 8 + 4 + 4 + (4 + 8) + (4 + 5) + 8 + 4, rec = 3 * 8 + 7 * 8;
	uint8_t extra[4] = { 0xee, 0xee, 0xee, 0xee };
	uint32_t body;

	write_sample(&b, 1, 1);
	CHECK_EQ(b.data[cpu0], rec);
	rt_buf_put(&longer, b.data, cpu0 + 4 + rec);
	rt_buf_put(&longer, extra, sizeof(extra));
	rt_buf_put(&longer, b.data + cpu0 + 4 + rec, b.len - cpu0 - 4 - rec);
	longer.data[cpu0] = (uint8_t)(rec + 4);
	body = (uint32_t)b.data[12] | (uint32_t)b.data[13] << 8;
	longer.data[12] = (uint8_t)(body + 4);
	longer.data[13] = (uint8_t)((body + 4) >> 8);
	CHECK_EQ(rt_state_read(longer.data, longer.len, &got, &why), 0);
	CHECK_EQ(got.cpus ? got.cpus[0].kernel_lost : 0, 3);
	CHECK_EQ(got.cpus ? got.cpus[0].ring.malformed : 0, 2);
	CHECK_EQ(got.ring_slots, 96);
	CHECK_EQ(got.n_subs, 1);
	CHECK_EQ(got.n_subs ? got.subs[0].delivered : 0, 12345);
	rt_state_release(&got);
	rt_buf_free(&b);
	rt_buf_free(&longer);
}

/*
 * What the first release wrote (fuzz/corpus/state/two-cpus-two-subs): no
 * ring counts, no transport, no geometry. Read as a state without a ring
 * whose subscribers are on the socket.
 */
static const uint8_t first_release[] = {
	0x52, 0x54, 0x53, 0x54, 0x41, 0x54, 0x45, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x20, 0x01, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x72, 0x69, 0x6e, 0x67,
	0x74, 0x61, 0x70, 0x00, 0x05, 0x00, 0x00, 0x00, 0x6d, 0x6f, 0x6e, 0x6f,
	0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00,
	0x00, 0x18, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00,
	0x00, 0x6a, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
	0x00, 0x01, 0x00, 0x00, 0x00, 0xe8, 0x03, 0x00, 0x00, 0x92, 0x10, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x0f, 0x00, 0x00, 0x00, 0x72, 0x69, 0x6e,
	0x67, 0x74, 0x61, 0x70, 0x20, 0x73, 0x74, 0x72, 0x65, 0x61, 0x6d, 0x00,
	0x06, 0x00, 0x00, 0x00, 0x75, 0x69, 0x64, 0x20, 0x30, 0x00, 0x05, 0x00,
	0x00, 0x00, 0x0a, 0x03, 0x61, 0x3a, 0x62, 0x01, 0x00, 0x00, 0x00, 0x05,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00,
	0x01, 0x02, 0x03, 0x51, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0xe8, 0x03, 0x00, 0x00, 0x92,
	0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x72,
	0x61, 0x77, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x64, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00,
};

static void first_release_state(void)
{
	struct rt_state got;
	struct rt_why why = { "" };

	CHECK_EQ(rt_state_read(first_release, sizeof(first_release), &got, &why), 0);
	CHECK_STR(why.text, "");
	CHECK_EQ(got.ncpus, 2);
	CHECK_EQ(got.n_subs, 2);
	if (got.ncpus == 2 && got.n_subs == 2) {
		CHECK_EQ(got.cpus[0].pages, 1);
		CHECK_EQ(got.cpus[0].records, 2);
		CHECK_EQ(got.cpus[0].kernel_lost, 3);
		CHECK_EQ(got.cpus[1].pages, 4);
		CHECK_EQ(got.cpus[1].ring.written, 0);
		CHECK_EQ(got.cpus[1].ring.events_before, 0);
		CHECK_EQ(got.cpus[1].unknown, 0);
		CHECK_STR(got.subs[0].name, "ringtap stream");
		CHECK_EQ(got.subs[0].delivered, 100);
		CHECK_EQ(got.subs[0].unsent_len, 3);
		CHECK_EQ(got.subs[0].transport, RT_STATE_TRANSPORT_SOCKET);
		CHECK_STR(got.subs[1].name, "raw");
		CHECK_EQ(got.subs[1].transport, RT_STATE_TRANSPORT_SOCKET);
		CHECK(!got.subs[0].numbered);
		CHECK_EQ(got.subs[1].catch_up_len, 0);
	}
	CHECK_EQ(got.ring_slots, 0);
	rt_state_release(&got);
}

int main(void)
{
	round_trip();
	refusals();
	longer_record();
	first_release_state();
	crash_state();
	return check_exit("test-state");
}
