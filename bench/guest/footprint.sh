# Guest half of bench-footprint: ringtapd's resident memory (VmRSS from
# /proc) with nobody subscribed, with 64 subscribers (rt-guest-load: decoded,
# FIXED, filtered, and slow readers whose queues fill), and its most while
# they stream; trace-cmd record's processes (summed) idle and at the same
# rate, in this boot. Lines: FP TOOL STATE KB
sock=/run/ringtap/ringtapd.sock
rate=${FP_RATE:-1000} seconds=${FP_SECONDS:-10}
kb() { sed -n "s/^VmRSS:[\t ]*\([0-9]*\) kB/\1/p" /proc/$1/status 2>/dev/null; }
# The sum over every trace-cmd process (record forks a reader per CPU).
tc_kb() {
	_s=0
	for _f in /proc/[0-9]*/comm; do
		[ "$(cat $_f 2>/dev/null)" = trace-cmd ] || continue
		_p=${_f%/comm}
		_s=$((_s + $(kb ${_p#/proc/}) ))
	done
	echo $_s
}
# most_while CMD: the largest of CMD's outputs, once a second for $seconds at $rate.
most_while() {
	_m=0
	echo $rate > $RINGTAP_TEST/rate
	for _ in $(seq $seconds); do
		sleep 1
		_r=$($1)
		[ "${_r:-0}" -gt $_m ] && _m=$_r
	done
	echo 0 > $RINGTAP_TEST/rate
	echo $_m
}

ringtapd -s $sock --max-clients 64 2> /tmp/d.err &
d=$!
wait_lines /tmp/d.err "listening on"
sleep 1
echo "FP ringtapd idle $(kb $d)"
rt-guest-load $sock 64 > /tmp/load.out 2> /tmp/load.err &
load=$!
wait_lines /tmp/d.err subscribed 64 60
echo "FP ringtapd subscribed-64 $(kb $d)"
echo "FP ringtapd streaming-64 $(most_while "kb $d")"
kill -USR1 $load
sleep 3
kill -INT $d
wait_or_dump $d 120 || fail "ringtapd exit status $?: $(tail -n 20 /tmp/d.err)"
wait_or_dump $load 120 || fail "rt-guest-load: $(cat /tmp/load.err)"

trace-cmd record -e ringtap_test:ringtap_test -o /tmp/t.dat > /tmp/t.out 2>&1 &
t=$!
wait_tracer "trace-cmd record"
sleep 1
echo "FP trace-cmd recording-idle $(tc_kb)"
echo "FP trace-cmd recording $(most_while tc_kb)"
kill -INT $t
wait_or_dump $t 120
rm -f /tmp/t.dat
