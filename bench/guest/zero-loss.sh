# Guest half of bench-zero-loss: the test source at increasing rates for
# ZL_SECONDS each; ringtapd + `ringtap record` (raw, over the socket),
# `trace-cmd record`, ringtapd + a decoded subscriber that counts (socket),
# `trace-cmd record -N` to `trace-cmd listen`, ringtapd + `ringtap record`
# over the page ring (ringtap-ring) and ringtapd + a decoded ring reader
# that looks at every field of every record (ringtap-ring-decoded), the
# same buffer size, one after the other in this boot. Lines:
# ZL TOOL RATE EMITTED RECORDED TICKS DAEMON_TICKS [failed: WHY]
# and, after the rates, ringtapd's own CPU with 1 and with 16 RAW ring
# readers at ZL_READERS_RATE (64k/s unless said):
# ZLR READERS RATE EMITTED TICKS DAEMON_TICKS LOST
# TICKS: the CPU time of every process of the tool, in 1/100 s with four
# decimals (the scheduler's sum_exec_runtime of each thread, from
# /proc/PID/task/TID/sched: at 8k/s trace-cmd's whole run is a few ticks,
# and whole ticks made its ratios jump by multiples between boots)
# (its daemon, recorders, listener) from the source's start to a second
# after its stop; DAEMON_TICKS: ringtapd's alone (0 for trace-cmd). A run
# whose tool failed (no file, a report that fails, a crash) says why: it is
# no measurement of a loss. Each capture is counted and deleted before the
# next tool runs, in a guest with RAM for the largest one.
sock=/run/ringtap/ringtapd.sock
secs=${ZL_SECONDS:-10}
rates=${ZL_RATES:-"8000 16000 32000 64000 128000 256000 512000"}
# ZL_DAEMON_ARGS: ringtapd options to compare, e.g. "--wake-percent=25".
daemon_args=${ZL_DAEMON_ARGS:-}
# ZL_RECORD_ARGS: `ringtap record` options, e.g. "--max-latency=100" (its default is 1000).
record_args=${ZL_RECORD_ARGS:-}
emitted() { sed -n 's/^total //p' $RINGTAP_TEST/emitted; }
# tool_ticks "COMM ...": the CPU time (1/100 s) of every process with one of these names.
tool_ticks() {
	_p=
	for _d in /proc/[0-9]*; do
		_c=$(cat $_d/comm 2>/dev/null) || continue
		case " $1 " in *" $_c "*) _p="$_p $_d/task/*/sched" ;; esac
	done
	# sum_exec_runtime is in ms; a thread gone meanwhile just counts 0.
	[ -n "$_p" ] || { echo 0; return; }
	cat $_p 2>/dev/null | awk '$1 == "se.sum_exec_runtime" { s += $3 } END { printf "%.4f\n", s / 10 }'
}
# at_rate RATE "COMM ...": the source at RATE for $secs; sets $emitted,
# $ticks (the named processes' CPU meanwhile) and $dticks (ringtapd's alone).
at_rate() {
	_t=$(tool_ticks "$2")
	_d=$(tool_ticks ringtapd)
	_a=$(emitted)
	echo $1 > $RINGTAP_TEST/rate
	sleep $secs
	echo 0 > $RINGTAP_TEST/rate
	emitted=$(( $(emitted) - _a ))
	sleep 1
	ticks=$(awk -v a="$(tool_ticks "$2")" -v b=$_t 'BEGIN { printf "%.4f", a - b }')
	dticks=$(awk -v a="$(tool_ticks ringtapd)" -v b=$_d 'BEGIN { printf "%.4f", a - b }')
}
# through_ringtapd RATE "COMM ..." OUT CLIENT...: ringtapd with CLIENT (its
# output into OUT) as its one subscriber while the source runs at RATE, then
# stopped; sets what at_rate sets.
through_ringtapd() {
	_rate=$1 _comms=$2 _out=$3
	shift 3
	rm -f /tmp/d.err
	ringtapd -s $sock -b 1024 $daemon_args 2> /tmp/d.err &
	_daemon=$!
	wait_lines /tmp/d.err "listening on"
	"$@" > $_out 2>&1 &
	_client=$!
	wait_lines /tmp/d.err subscribed
	at_rate $_rate "$_comms"
	kill -INT $_daemon
	wait_or_dump $_daemon 120
	wait_or_dump $_client 60
	# Where a loss came from (kernel overrun or a full queue): the stop's report.
	tail -n 3 /tmp/d.err | sed "s/^/note: $1 $_rate ringtapd: /"
}
# record_row TOOL: the ZL line of the recording in /tmp/r.cap, then deleted.
record_row() {
	why=
	got=$(rt-guest-capture-check /tmp/r.cap 2> /tmp/r.chk | sed -n 's/.* test_records=\([0-9]*\).*/\1/p')
	[ -n "$got" ] || why="failed: $(head -c 120 /tmp/r.chk /tmp/r.err | tr '\n' ' ')"
	rm -f /tmp/r.cap
	echo "ZL $1 $rate $emitted ${got:-0} $ticks $dticks $why"
}
# decoded_row TOOL: the ZL line of the counting subscriber's output in /tmp/w.out.
decoded_row() {
	got=$(awk '$1 == "WIRE" { print $4 }' /tmp/w.out)
	why=
	[ -n "$got" ] || why="failed: $(head -c 120 /tmp/w.out | tr '\n' ' ')"
	echo "ZL $1 $rate $emitted ${got:-0} $ticks $dticks $why"
}
for rate in $rates; do
	rm -f /tmp/r.cap
	through_ringtapd $rate "ringtapd ringtap" /tmp/r.err \
		ringtap record -s $sock --transport=socket -e ringtap_test:ringtap_test -o /tmp/r.cap \
		$record_args
	record_row ringtap

	echo 1024 > $T/buffer_size_kb
	trace-cmd record -b 1024 -e ringtap_test:ringtap_test -o /tmp/t.dat > /tmp/t.out 2>&1 &
	t=$!
	wait_tracer "trace-cmd record"
	sleep 1
	at_rate $rate trace-cmd
	kill -INT $t
	why=
	wait_or_dump $t 120
	if ! trace-cmd report -i /tmp/t.dat > /tmp/t.txt 2> /tmp/t.rep; then
		why="failed: trace-cmd report: $(head -c 120 /tmp/t.rep /tmp/t.out | tr '\n' ' ')"
	fi
	got=$(grep -c 'ringtap_test:' /tmp/t.txt || true)
	rm -f /tmp/t.dat /tmp/t.txt
	echo "ZL trace-cmd $rate $emitted $got $ticks 0 $why"

	# ringtapd to one decoded subscriber that only counts its records.
	through_ringtapd $rate "ringtapd rt-guest-wireby" /tmp/w.out \
		rt-guest-wirebytes $sock decoded
	decoded_row ringtap-decoded

	# The same two over the page ring: pages and records read from the
	# mapped ring, the socket carrying only notes.
	rm -f /tmp/r.cap
	through_ringtapd $rate "ringtapd ringtap" /tmp/r.err \
		ringtap record -s $sock --transport=ring -e ringtap_test:ringtap_test -o /tmp/r.cap \
		$record_args
	record_row ringtap-ring
	through_ringtapd $rate "ringtapd rt-guest-wireby" /tmp/w.out \
		rt-guest-wirebytes $sock decoded-ring
	decoded_row ringtap-ring-decoded

	# The peer's network path: trace-cmd record -N to trace-cmd listen over
	# loopback, on TCP (-t): its default, UDP, sends a splice of many pages
	# as one datagram and listen reads a page of each (in this guest one
	# CPU's file stayed empty). listen names its peer with getnameinfo(),
	# which needs a hosts file.
	ip link set lo up
	echo "127.0.0.1 localhost" > /etc/hosts
	echo "hosts: files" > /etc/nsswitch.conf
	rm -rf /tmp/listen && mkdir -p /tmp/listen
	trace-cmd listen -p 12345 -d /tmp/listen > /tmp/l.out 2>&1 &
	l=$!
	sleep 1
	echo 1024 > $T/buffer_size_kb
	trace-cmd record -N 127.0.0.1:12345 -t -b 1024 -e ringtap_test:ringtap_test > /tmp/n.out 2>&1 &
	t=$!
	wait_tracer "trace-cmd record -N: $(cat /tmp/n.out /tmp/l.out)"
	sleep 1
	at_rate $rate trace-cmd
	kill -INT $t
	why=
	wait_or_dump $t 120
	sleep 2
	kill -INT $l
	wait_or_dump $l 60 || true
	got=0
	files=0
	for f in /tmp/listen/*.dat; do
		[ -e "$f" ] || continue
		files=$((files + 1))
		trace-cmd report -i "$f" > /tmp/l.txt 2> /tmp/l.rep ||
			why=${why:-"failed: trace-cmd report $f: $(head -c 100 /tmp/l.rep | tr '\n' ' ')"}
		got=$((got + $(grep -c 'ringtap_test:' /tmp/l.txt || true)))
		rm -f /tmp/l.txt
	done
	[ $files -gt 0 ] || why=${why:-"failed: trace-cmd listen wrote no file"}
	echo "ZL trace-cmd-listen $rate $emitted $got $ticks 0 $why"
	rm -rf /tmp/listen
done

# ringtapd's own CPU with 1 and with 16 ring readers at one rate: each a
# RAW ring reader (cheap in its own CPU, so that 16 of them leave ringtapd
# the guest's CPUs); what a ring reader costs the daemon is its notes.
rrate=${ZL_READERS_RATE:-64000}
for readers in 1 16; do
	rm -f /tmp/d.err /tmp/rr.*
	ringtapd -s $sock -b 1024 $daemon_args 2> /tmp/d.err &
	daemon=$!
	wait_lines /tmp/d.err "listening on"
	pids=
	for i in $(seq $readers); do
		rt-guest-wirebytes $sock raw-ring > /tmp/rr.$i 2>&1 &
		pids="$pids $!"
	done
	wait_lines /tmp/d.err subscribed $readers 30
	at_rate $rrate "ringtapd rt-guest-wireby"
	kill -INT $daemon
	wait_or_dump $daemon 120
	lost=0
	for p in $pids; do wait_or_dump $p 60; done
	for i in $(seq $readers); do
		grep -q '^WIRE ' /tmp/rr.$i || echo "note: ring reader $i: $(head -c 200 /tmp/rr.$i)"
		lost=$((lost + $(sed -n 's/.* lost \([0-9]*\)$/\1/p' /tmp/rr.$i)))
	done
	echo "ZLR $readers $rrate $emitted $ticks $dticks $lost"
done
pass "every tool ran at every rate asked, and 1 and 16 ring readers"
