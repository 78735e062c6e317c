# Guest: ringtapd --stdout decodes the test source's events with every
# sequence number present once and the payloads exact; with a tiny buffer
# and a slow drain, delivered + counted lost = emitted, exactly.

# Each run writes its own stderr file: a stale one would say "tracing" early.
wait_for_tracing() { wait_lines "$1" '^ringtapd: tracing '; }

emitted() { sed -n 's/^total //p' $RINGTAP_TEST/emitted; }

# --- every event, once -------------------------------------------------------
n=5000
ringtapd --stdout --no-time -e ringtap_test:ringtap_test > /tmp/out 2> /tmp/err1 &
pid=$!
wait_for_tracing /tmp/err1
start=$(emitted)
echo $n > $RINGTAP_TEST/burst
kill -INT $pid
wait_or_dump $pid 20 || fail "ringtapd exited with $?: $(cat /tmp/err1)"
cat /tmp/err1
[ -d $T/instances/ringtap ] && fail "instance left behind"
pass "instance removed on exit"
expect_eq "emitted" $(( $(emitted) - start )) $((2 * n))
expect_eq "records" "$(grep -c 'ringtap_test:ringtap_test' /tmp/out)" $((2 * n))
expect_eq "distinct (cpu, seq)" \
	"$(sed -n 's/.* seq=\([0-9]*\) cpu=\([0-9]*\) .*/\2:\1/p' /tmp/out | sort -u | wc -l)" $((2 * n))
expect_eq "lost lines" "$(grep -c '^#' /tmp/out)" 0
grep -q "^\[001\] ringtap_test:ringtap_test pid=[0-9]* seq=7 cpu=1 tag=rtaptest msg=cpu1 seq 7 xxxxxxx$" /tmp/out ||
	fail "payload of cpu1 seq 7: $(grep 'seq=7 cpu=1' /tmp/out)"
pass "payload of cpu1 seq 7"

# --- overrun: nothing lost silently -----------------------------------------
n=20000
ringtapd --stdout --no-time -b 8 --drain-ms 2000 -e ringtap_test:ringtap_test > /tmp/out 2> /tmp/err2 &
pid=$!
wait_for_tracing /tmp/err2
start=$(emitted)
echo "note: burst of $n per CPU into 8 KiB buffers"
echo $n > $RINGTAP_TEST/burst
echo "note: burst done, stopping ringtapd"
kill -INT $pid
wait_or_dump $pid 20 || fail "ringtapd exited with $?: $(cat /tmp/err2)"
cat /tmp/err2
delivered=$(grep -c 'ringtap_test:ringtap_test' /tmp/out)
lost=$(sed -n 's/^# cpu [0-9]*: lost \([0-9]*\) events.*/\1/p' /tmp/out | awk '{ s += $1 } END { print s + 0 }')
uncounted=$(grep -c 'count unknown' /tmp/out)
echo "note: delivered $delivered, lost $lost, pages with an unknown count $uncounted"
[ "$lost" -gt 0 ] || fail "a tiny buffer lost nothing"
expect_eq "delivered + lost" $((delivered + lost)) $(( $(emitted) - start ))
expect_eq "pages with an unknown count" "$uncounted" 0

# --- pointers print as symbols where /proc/kallsyms allows -------------------
ringtapd --stdout --no-time -e timer:timer_start --duration 0.5 > /tmp/out 2> /tmp/err3 ||
	fail "ringtapd on timer_start: $(cat /tmp/err3)"
grep -q 'kernel symbols loaded' /tmp/err3 || fail "no symbols loaded: $(cat /tmp/err3)"
grep -q ' function=0x[0-9a-f]*<[a-z_0-9.]*>' /tmp/out || fail "no symbol in: $(head -3 /tmp/out)"
pass "pointer fields print as symbols: $(grep -o -m1 'function=[^ ]*' /tmp/out)"

# --- a stale instance left by a crash is reclaimed ----------------------------
mkdir $T/instances/ringtap
echo 1 > $T/instances/ringtap/events/sched/sched_switch/enable
ringtapd --stdout --no-time -e ringtap_test:ringtap_test --duration 0.2 > /tmp/out 2> /tmp/err3 ||
	fail "ringtapd with a stale instance: $(cat /tmp/err3)"
grep -q 'removed a stale instance' /tmp/err3 || fail "stale instance not reported: $(cat /tmp/err3)"
grep -q sched_switch /tmp/out && fail "the stale instance's events leaked into the stream"
[ -d $T/instances/ringtap ] && fail "instance left behind"
pass "stale instance reclaimed"

# --- ringtapd leaves itself out of its trace, unless told to trace itself -------
# hrtimer_start: ringtapd arms timers (its drain timer, poll timeouts) as the
# current task. (sched_switch would not do: the kernel keeps a switch whose
# other side is traced.)
ringtapd --stdout --no-time -e timer:hrtimer_start --duration 1 > /tmp/out 2> /tmp/err4 &
pid=$!
wait_or_dump $pid 30 || fail "ringtapd on hrtimer_start: $(cat /tmp/err4)"
[ "$(grep -c 'timer:hrtimer_start pid=' /tmp/out)" -gt 0 ] || fail "no hrtimer_start recorded"
expect_eq "hrtimer_start records from ringtapd itself ($pid)" \
	"$(grep -c " pid=$pid " /tmp/out || true)" 0
ringtapd --stdout --no-time -e timer:hrtimer_start --duration 1 --trace-self 1 > /tmp/out \
	2> /tmp/err5 &
pid=$!
wait_or_dump $pid 30 || fail "ringtapd --trace-self 1: $(cat /tmp/err5)"
[ "$(grep -c " pid=$pid " /tmp/out || true)" -gt 0 ] ||
	fail "--trace-self 1: no record from ringtapd itself ($pid)"
pass "ringtapd's own hrtimer_start records: none by default, $(grep -c " pid=$pid " /tmp/out) with --trace-self 1"
