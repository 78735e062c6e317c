# Guest half of bench-profile: where the CPU goes. The test source at
# PROF_RATE for PROF_SECONDS under three consumers in turn, ringtapd raw to
# `ringtap record`, ringtapd decoded to a subscriber that only counts, and
# trace-cmd record, while `perf record` samples every CPU (cpu-clock: under
# TCG there is no PMU) and `perf stat` counts each consumer thread's CPU,
# system calls and context switches. Lines:
# PROFRUN TOOL EMITTED                      events the source wrote meanwhile
# PROFSTAT TOOL COMM-TID COUNTER VALUE      task-clock (ms), context-switches,
#                                           raw_syscalls:sys_enter
# PROF TOOL PERCENT COMM DSO [k]|[.] SYMBOL the consumer's samples by symbol
# PROFDSO TOOL PERCENT COMM DSO             ... by process and object
# PROFSYSRUN TOOL EMITTED, then            a shorter run, its system calls
# PROFSYS TOOL COMM NR COUNT                by number
# Sampling at the tick favours what runs across it: the counters, not the
# samples, compare the tools; the samples say where each one's time goes.
# PROF_TRANSPORT=ring: the recorder and the decoded subscriber read
# ringtapd's page ring instead of the socket (the rows keep their names).
sock=/run/ringtap/ringtapd.sock
transport=${PROF_TRANSPORT:-socket}
decoded=decoded
[ $transport = socket ] || decoded=decoded-ring
secs=${PROF_SECONDS:-10}
rate=${PROF_RATE:-256000}
emitted() { sed -n 's/^total //p' $RINGTAP_TEST/emitted; }
ringtapd_at() {
	ringtapd -s $sock -b 1024 2> /tmp/d.err &
	daemon=$!
	wait_lines /tmp/d.err "listening on"
}
pids_of() {
	for _d in /proc/[0-9]*; do
		[ "$(cat $_d/comm 2>/dev/null)" = "$1" ] && echo ${_d#/proc/}
	done | tr '\n' ' '
}
# profile TOOL "PIDS": the source at $rate for $secs, sampled and counted;
# then for half as long with the PIDS' system calls recorded, apart: a
# tracepoint hit on every call would load the tool that makes the most.
profile() {
	_pids=$(echo $2 | tr ' ' ',')
	perf stat --per-thread -x, -e task-clock,context-switches,raw_syscalls:sys_enter \
		-p $_pids -o /tmp/stat.txt 2>/dev/null &
	_stat=$!
	perf record -q -a -e cpu-clock -F 1000 -o /tmp/perf.data 2>/tmp/perf.err &
	_rec=$!
	sleep 1
	_e=$(emitted)
	echo $rate > $RINGTAP_TEST/rate
	sleep $secs
	echo 0 > $RINGTAP_TEST/rate
	echo "PROFRUN $1 $(( $(emitted) - _e ))"
	sleep 1
	kill -INT $_rec $_stat
	wait $_rec $_stat
	# The consumer's processes only: each symbol's share of their samples,
	# then their samples by process and object.
	_comms=$(for _p in $2; do cat /proc/$_p/comm; done 2>/dev/null | sort -u | tr '\n' ',')
	_comms=${_comms%,}
	perf report -q -i /tmp/perf.data --stdio --no-children --comms $_comms \
		--sort comm,dso,sym --percentage relative --percent-limit 1.5 2>/dev/null |
		awk -v t=$1 'NF > 2 { print "PROF", t, $0 }'
	perf report -q -i /tmp/perf.data --stdio --no-children --comms $_comms --sort comm,dso \
		--percentage relative --percent-limit 0.5 2>/dev/null |
		awk -v t=$1 'NF > 2 { print "PROFDSO", t, $0 }'
	awk -F, -v t=$1 '$1 != "" && $1 !~ /^#/ && $2 + 0 > 0 { print "PROFSTAT", t, $1, $4, $2 }' \
		/tmp/stat.txt
	rm -f /tmp/perf.data

	perf record -q -e raw_syscalls:sys_enter -p $_pids -o /tmp/sys.data 2>/tmp/sys.err &
	_sys=$!
	sleep 1
	_e=$(emitted)
	echo $rate > $RINGTAP_TEST/rate
	sleep $((secs / 2))
	echo 0 > $RINGTAP_TEST/rate
	echo "PROFSYSRUN $1 $(( $(emitted) - _e ))"
	sleep 1
	kill -INT $_sys
	wait $_sys
	perf script -i /tmp/sys.data -F comm,trace 2>/dev/null |
		awk -v t=$1 '$2 == "NR" { n[$1 " " $3]++ } END { for (k in n) print "PROFSYS", t, k, n[k] }'
	rm -f /tmp/sys.data
}
perf --version || fail "no perf in this guest"

ringtapd_at
ringtap record -s $sock --transport=$transport -e ringtap_test:ringtap_test -o /tmp/r.cap \
	2> /tmp/r.err &
client=$!
wait_lines /tmp/d.err subscribed 1 30
profile raw "$daemon $client"
kill -INT $daemon; wait $daemon $client
echo "note: raw: $(rt-guest-capture-check /tmp/r.cap)"
rm -f /tmp/r.cap

ringtapd_at
rt-guest-wirebytes $sock $decoded > /tmp/w.out 2>&1 &
client=$!
wait_lines /tmp/d.err subscribed 1 30
profile decoded "$daemon $client"
kill -INT $daemon; wait $daemon $client
echo "note: decoded: $(cat /tmp/w.out)"

echo 1024 > $T/buffer_size_kb
trace-cmd record -b 1024 -e ringtap_test:ringtap_test -o /tmp/t.dat > /tmp/t.out 2>&1 &
t=$!
wait_tracer "trace-cmd record"
profile trace-cmd "$(pids_of trace-cmd)"
kill -INT $t; wait $t
rm -f /tmp/t.dat
pass "profiled"
