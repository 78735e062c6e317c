# Guest half of bench-zero-loss: the test source at increasing rates for
# ZL_SECONDS each; ringtapd + `ringtap record` (raw) and `trace-cmd record`,
# the same buffer size, one after the other in this boot. Lines:
# ZL TOOL RATE EMITTED RECORDED
sock=/run/ringtap/ringtapd.sock
secs=${ZL_SECONDS:-10}
rates=${ZL_RATES:-"8000 32000 128000 512000"}
emitted() { sed -n 's/^total //p' $RINGTAP_TEST/emitted; }
# at_rate RATE: the source at RATE for $secs; sets $emitted.
at_rate() {
	_a=$(emitted)
	echo $1 > $RINGTAP_TEST/rate
	sleep $secs
	echo 0 > $RINGTAP_TEST/rate
	emitted=$(( $(emitted) - _a ))
	sleep 1
}
for rate in $rates; do
	rm -f /tmp/d.err /tmp/r.cap
	ringtapd -s $sock -b 1024 2> /tmp/d.err &
	d=$!
	wait_lines /tmp/d.err "listening on"
	ringtap record -s $sock -e ringtap_test:ringtap_test -o /tmp/r.cap 2> /tmp/r.err &
	r=$!
	wait_lines /tmp/d.err subscribed
	at_rate $rate
	kill -INT $d
	wait_or_dump $d 120
	wait_or_dump $r 60
	got=$(rt-guest-capture-check /tmp/r.cap | sed -n 's/.* test_records=\([0-9]*\).*/\1/p')
	echo "ZL ringtap $rate $emitted ${got:-0}"

	echo 1024 > $T/buffer_size_kb
	trace-cmd record -b 1024 -e ringtap_test:ringtap_test -o /tmp/t.dat > /tmp/t.out 2>&1 &
	t=$!
	_i=0
	until [ "$(cat $T/events/ringtap_test/ringtap_test/enable)" = 1 ]; do
		_i=$((_i + 1)); [ $_i -lt 100 ] || fail "trace-cmd did not start"; sleep 0.1
	done
	sleep 1
	at_rate $rate
	kill -INT $t
	wait_or_dump $t 120
	got=$(trace-cmd report -i /tmp/t.dat 2>/dev/null | grep -c 'ringtap_test:')
	echo "ZL trace-cmd $rate $emitted $got"
	rm -f /tmp/t.dat /tmp/r.cap
done
