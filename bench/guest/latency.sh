# Guest half of bench-latency: event-to-subscriber age at 1000 events/s, the
# trace clock being CLOCK_MONOTONIC (-C mono) so that the client can compare;
# a subscriber over the socket, then a reader of the page ring.
sock=/run/ringtap/ringtapd.sock
for transport in socket ring; do
	ringtapd -s $sock -C mono 2> /tmp/d.err &
	daemon=$!
	wait_lines /tmp/d.err "listening on"
	grep -q 'clock mono' /tmp/d.err || fail "the trace clock is not mono: $(cat /tmp/d.err)"
	arg=
	[ $transport = socket ] || arg=ring
	rm -f /tmp/lat.out
	rt-guest-latency $sock 12 $arg > /tmp/lat.out 2>&1 &
	lat=$!
	wait_lines /tmp/lat.out subscribed
	echo 1000 > $RINGTAP_TEST/rate
	sleep 10
	echo 0 > $RINGTAP_TEST/rate
	wait_or_dump $lat 30 || fail "rt-guest-latency ($transport): $(cat /tmp/lat.out)"
	kill -INT $daemon
	wait_or_dump $daemon 30
	set -- $(grep "^LATENCY" /tmp/lat.out)
	[ "${2:-0}" -gt 0 ] || fail "rt-guest-latency ($transport) got no record: $(cat /tmp/lat.out)"
	echo "note: latency at 1000 events/s over the $transport, $2 events: p50 $3 us, p99 $4 us, max $5 us (max_latency_ms 100: drained every 75 ms while records flow)"
done
pass "latency measured over the socket and over the ring"
