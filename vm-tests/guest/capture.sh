# Guest: captures tracefs-shaped fixture trees for the host tests, and
# exports them (OUT/export/<name>/ on the host). Each tree holds what
# tracefs_set_tracing_dir() needs: events/header_page, events/header_event,
# the formats of the captured events, per_cpu/cpuN/{trace_pipe_raw,stats},
# and trace.txt: the kernel's own text of the same events, read before the
# raw pages were consumed, as the oracle the decoder is checked against.
out=/tmp/out
mkdir -p $out

# capture NAME BUFFER_KB BURST EVENTS...
capture() {
	name=$1 kb=$2 burst=$3
	shift 3
	inst=$T/instances/$name
	dst=$out/$name
	mkdir $inst || fail "instance $name"
	echo 0 > $inst/tracing_on
	echo $kb > $inst/buffer_size_kb
	for ev in "$@"; do
		echo 1 > $inst/events/$ev/enable || fail "enable $ev"
	done
	echo 1 > $inst/tracing_on
	echo $burst > $RINGTAP_TEST/burst || fail "burst"
	for cpu in 0 1; do
		taskset -c $cpu sh -c "echo 'marker from cpu$cpu' > $inst/trace_marker"
	done
	sleep 0.2
	echo 0 > $inst/tracing_on
	cp $inst/trace $dst.trace.txt 2>/dev/null || cat $inst/trace > $dst.trace.txt
	mkdir -p $dst/events
	cp $T/events/header_page $T/events/header_event $dst/events/
	for ev in "$@" ftrace/print; do
		mkdir -p $dst/events/$ev
		cat $T/events/$ev/format > $dst/events/$ev/format
		# libtracefs lists a system only when it looks like one.
		: > $dst/events/${ev%/*}/enable
		: > $dst/events/$ev/enable
	done
	for cpu in 0 1; do
		mkdir -p $dst/per_cpu/cpu$cpu
		cat $inst/per_cpu/cpu$cpu/stats > $dst/per_cpu/cpu$cpu/stats
		rt-guest-rawdump $inst/per_cpu/cpu$cpu/trace_pipe_raw \
			$dst/per_cpu/cpu$cpu/trace_pipe_raw || fail "rawdump"
	done
	mv $dst.trace.txt $dst/trace.txt
	cat $inst/buffer_size_kb > $dst/buffer_size_kb
	cat $inst/trace_clock > $dst/trace_clock
	echo 0 > $T/events/enable
	pass "captured $name: $(grep -c . $dst/trace.txt) lines of text"
}

capture normal 64 50 ringtap_test/ringtap_test sched/sched_switch
capture overrun 8 1000 ringtap_test/ringtap_test
# "# entries-in-buffer/entries-written: 385/2004   #P:2"
set -- $(sed -n 's|^# entries-in-buffer/entries-written: \([0-9]*\)/\([0-9]*\).*|\1 \2|p' $out/overrun/trace.txt)
[ "$1" -lt "$2" ] || fail "overrun capture lost nothing ($1 of $2 kept)"
pass "overrun capture kept $1 of $2 events"
head -20 $out/overrun/trace.txt
export_dir $out
