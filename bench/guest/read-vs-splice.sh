# Guest benchmark: CPU time to drain the same burst from trace_pipe_raw with
# read() and with splice(), one round each, on both CPUs.
inst=$T/instances/bench
mkdir $inst
echo 0 > $inst/tracing_on
echo 8192 > $inst/buffer_size_kb
echo 1 > $inst/events/ringtap_test/ringtap_test/enable
for mode in read splice read splice; do
	echo 1 > $inst/tracing_on
	echo 40000 > $RINGTAP_TEST/burst
	echo 0 > $inst/tracing_on
	for cpu in 0 1; do
		out=$(taskset -c $cpu rt-guest-readbench $inst/per_cpu/cpu$cpu/trace_pipe_raw $mode)
		echo "note: cpu$cpu $out"
	done
	grep -q "overrun: 0" $inst/per_cpu/cpu0/stats || fail "the burst overran the buffer"
done
