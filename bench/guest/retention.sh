# Guest half of bench-retention: how many events one CPU's ring buffer
# retains in overwrite mode with a fixed buffer_size_kb, for sched_switch,
# the test event and a 32-byte event (a 15-character trace_marker write is
# a 32-byte print entry on the stock kernel), next to the prediction from
# the kernel's own header_page, header_event and format texts. One line per
# event: RETAIN EVENT ENTRY_BYTES RECORD_BYTES ENTRIES PREDICTED
I=$T/instances/retention
mkdir $I || fail "cannot create the instance"
echo 0 > $I/tracing_on
echo 32 > $I/buffer_size_kb
kb=$(cat $I/per_cpu/cpu0/buffer_size_kb)
# Page data bytes and the largest payload an event header's type_len holds.
data=$(sed -n 's/.*field: char data;.*size:\([0-9]*\);.*/\1/p' $T/events/header_page)
max_words=$(sed -n 's/.*data max type_len *== *\([0-9]*\).*/\1/p' $T/events/header_event)
# The event header (type_len + time_delta) and the length word (array), in bytes.
hdr=$(awk '/type_len|time_delta/ { b += $3 } END { print b / 8 }' $T/events/header_event)
len_word=$(awk '/array/ { print $3 / 8 }' $T/events/header_event)
[ -n "$data" ] && [ -n "$max_words" ] && [ "$hdr" -gt 0 ] && [ "$len_word" -gt 0 ] ||
	fail "cannot read header_page/header_event"

# fixed_size FORMAT: bytes up to the end of the last fixed field.
fixed_size() {
	sed -n 's/.*offset:\([0-9]*\);[[:space:]]*size:\([0-9]*\);.*/\1 \2/p' "$1" |
		awk '{ e = $1 + $2; if (e > m) m = e } END { print m }'
}
# record_size PAYLOAD: what one event takes in a page (header_event's rules;
# payloads are counted in 4-byte words, type_len's unit).
record_size() {
	awk -v p="$1" -v w="$max_words" -v h="$hdr" -v l="$len_word" 'BEGIN {
		r = int((p + 3) / 4) * 4
		print (r <= w * 4) ? h + r : h + l + r }'
}
entries0() { sed -n 's/^entries: //p' $I/per_cpu/cpu0/stats; }
# buffer_size_kb reads back pages x data bytes, rounded down to KiB.
pages=$(( (kb * 1024 + data - 1) / data ))
echo "note: buffer $kb KiB per CPU ($pages pages of $data data bytes), type_len up to $max_words words"

run() { # EVENT-DIR GENERATOR...
	_ev=$1
	shift
	echo 0 > $I/tracing_on
	echo > $I/trace
	echo 0 > $I/events/enable
	echo 1 > $I/events/$_ev/enable
	echo 1 > $I/tracing_on
	"$@"
	echo 0 > $I/tracing_on
}
predict() { # RECORD_BYTES -> events the buffer's pages hold
	awk -v d="$data" -v r="$1" -v n="$pages" 'BEGIN { print int(d / r) * n }'
}

# sched_switch: fixed size. Context switches on CPU 0 from a fork loop pinned there.
switches() { taskset 1 sh -c 'for i in $(seq 1500); do /bin/true; done'; }
run sched/sched_switch switches
e=$(fixed_size $T/events/sched/sched_switch/format)
r=$(record_size $e)
echo "RETAIN sched_switch $e $r $(entries0) $(predict $r)"

# 32-byte event: trace_marker "0123456789abcd\n" (15 bytes + NUL) from CPU 0.
marks() { taskset 1 sh -c "for i in \$(seq 3000); do echo 0123456789abcd > $I/trace_marker; done"; }
run ftrace/print marks 2>/dev/null || true
echo 0 > $I/tracing_on
echo > $I/trace
echo 1 > $I/tracing_on
marks
echo 0 > $I/tracing_on
e=$(( $(fixed_size $T/events/ftrace/print/format) + 16 ))
r=$(record_size $e)
echo "RETAIN print-32 $e $r $(entries0) $(predict $r)"

# The test event: __data_loc msg "cpuN seq S " plus S%8 x's; its size is
# taken from the retained records themselves (the instance's trace text).
run ringtap_test/ringtap_test sh -c "echo 5000 > $RINGTAP_TEST/burst"
f=$(fixed_size $T/events/ringtap_test/ringtap_test/format)
r=$(grep ' \[000\] ' $I/trace | sed -n 's/.* msg=\(.*\)$/\1/p' |
	awk -v f="$f" -v w="$max_words" -v h="$hdr" -v l="$len_word" '{
		p = f + length($0) + 1; q = int((p + 3) / 4) * 4
		s += (q <= w * 4) ? h + q : h + l + q; n++ } END { printf "%.1f", s / n }')
echo "RETAIN ringtap_test $f+msg $r $(entries0) $(awk -v d="$data" -v r="$r" -v n="$pages" 'BEGIN { print int(d / r) * n }')"
rmdir $I
