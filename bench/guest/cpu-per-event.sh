# Guest benchmark: CPU seconds per million events to consume the same burst
# of test events, for ringtapd + one `ringtap stream` subscriber (decoded,
# text out), ringtapd + `ringtap record` (raw, to a file), and trace-cmd
# record (to a file), in this one boot. 16 MiB buffers hold the whole burst,
# so the figure is consumer CPU (user + system of the consumer's processes,
# idle waits included for all three alike); each tool allocates its buffers
# within its measured run.
n=${BENCH_EVENTS_PER_CPU:-100000}
sock=/run/ringtap/ringtapd.sock
emitted() { sed -n 's/^total //p' $RINGTAP_TEST/emitted; }

# run_ringtap NAME WAIT CLIENT-ARGS...: daemon + client under one `time`;
# WAIT "client": the client stops by itself (--count); else seconds to wait.
run_ringtap() {
	name=$1 wait=$2
	shift 2
	rm -f /tmp/d.err
	# The daemon's own CPU (utime + stime ticks) just before its stop.
	ticks="awk '{ print \$14 + \$15 }' /proc/\$d/stat > /tmp/dticks.$name"
	if [ "$wait" = client ]; then stop="wait \$c; $ticks; kill -INT \$d; wait \$d"
	else stop="sleep $wait; $ticks; kill -INT \$d; wait \$d \$c"; fi
	time -o /tmp/time.$name sh -c "
		ringtapd -s $sock -b 16384 --max-queue-kb 65536 2> /tmp/d.err &
		d=\$!
		while ! grep -q 'listening on' /tmp/d.err 2>/dev/null; do sleep 0.1; done
		timeout 120 ringtap $* > /tmp/out.$name 2> /tmp/c.err &
		c=\$!
		while ! grep -q subscribed /tmp/d.err; do sleep 0.1; done
		echo $n > $RINGTAP_TEST/burst
		$stop"
	echo "note: $name: $(tr '\n' ' ' < /tmp/time.$name) $(tail -n1 /tmp/c.err)"
}

run_ringtap decoded client stream --transport=socket -s $sock -e ringtap_test:ringtap_test \
	--no-time --count $((2 * n))
expect_eq "decoded records" "$(grep -c ringtap_test: /tmp/out.decoded)" $((2 * n))
run_ringtap raw 3 record --transport=socket -s $sock -e ringtap_test:ringtap_test -o /tmp/capture
echo "note: raw capture: $(rt-guest-capture-check /tmp/capture)"
rm -f /tmp/capture /tmp/out.decoded

# trace-cmd sizes the buffers itself, inside its measured run, as ringtapd
# does for its instance: allocating 32 MiB of ring buffer is part of the cost.
echo 4 > $T/buffer_size_kb
time -o /tmp/time.tracecmd sh -c "
	trace-cmd record -b 16384 -e ringtap_test:ringtap_test -o /tmp/trace.dat > /tmp/tc.out 2>&1 &
	t=\$!
	sleep 2
	echo $n > $RINGTAP_TEST/burst
	sleep 3
	kill -INT \$t
	wait \$t"
echo "note: trace-cmd: $(tr '\n' ' ' < /tmp/time.tracecmd) $(grep -i 'cpu\|lost' /tmp/tc.out | tr '\n' ' ' | cut -c1-200)"
ls -la /tmp/trace.dat

# busybox time: "user\t0m 6.46s"
cpu() { awk '/^user|^sys/ { m = $2; s = $3; sub("m", "", m); sub("s", "", s); t += m * 60 + s }
	END { printf "%.3f", t }' "$1"; }
for k in decoded raw tracecmd; do
	c=$(cpu /tmp/time.$k)
	echo "note: $k: $c CPU s for $((2 * n)) events = $(awk -v c=$c -v e=$((2 * n)) 'BEGIN { printf "%.2f", c * 1e6 / e }') CPU s per million"
done
t=$(cpu /tmp/time.tracecmd)
for k in decoded raw; do
	echo "note: ratio $k / trace-cmd: $(awk -v a=$(cpu /tmp/time.$k) -v b=$t 'BEGIN { printf "%.2f", a / b }')"
	# ringtapd alone (CLK_TCK 100), against trace-cmd's whole record run.
	echo "note: ringtapd alone ($k): $(awk -v d=$(cat /tmp/dticks.$k) -v e=$((2 * n)) -v b=$t \
		'BEGIN { printf "%.2f CPU s per million, %.2f x trace-cmd", d / 100 * 1e6 / e, d / 100 / b }')"
done
