# Guest: ringtapd serves its Unix socket and `ringtap stream` clients get
# exactly their own selection; a client stopped through five bursts holds no
# one back and, once it reads again, catches up from the page ring and gets
# everything too (the accounting of one the ring laps: vm-load, vm-soak); a
# client that vanishes does not disturb the daemon.
# Every client over the socket (--transport=socket): its queue, its losses and the
# daemon's counts of what it delivered are the socket's, not a ring reader's.
sock=/run/ringtap/ringtapd.sock

emitted() { sed -n 's/^total //p' $RINGTAP_TEST/emitted; }
count() { grep -c "$2" "$1"; }

# Sizes: a burst of 2 x 2500 test events is about 300 KiB encoded, and under
# TCG a client gets little CPU during one. A 1 MiB queue (plus the socket's
# own ~220 KiB) holds a burst for a client that reads between bursts, but
# not five for one that is stopped throughout: that one catches up from the
# page ring, whose default size (4 times the kernel's buffer) holds all five.
ringtapd -s $sock --max-queue-kb 1024 > /tmp/d.out 2> /tmp/d.err &
daemon=$!
wait_lines /tmp/d.err "listening on $sock"
[ "$(stat -c %a $sock)" = 660 ] || fail "socket mode $(stat -c %a $sock)"

# A: every test event; B: test events and sched_switch of CPU 1 (two globs);
# slow: stopped meanwhile; gone: killed before the burst.
ringtap stream --transport=socket -s $sock -e ringtap_test:ringtap_test --no-time > /tmp/a.out 2> /tmp/a.err &
a=$!
ringtap stream --transport=socket -s $sock -e 'ringtap_*:*,sched:sched_switch' --cpus 1 --no-time > /tmp/b.out 2> /tmp/b.err &
b=$!
ringtap stream --transport=socket -s $sock -e ringtap_test:ringtap_test --no-time > /tmp/slow.out 2> /tmp/slow.err &
slow=$!
ringtap stream --transport=socket -s $sock -e ringtap_test:ringtap_test > /dev/null 2>&1 &
gone=$!
wait_lines /tmp/d.err subscribed 4
pass "4 clients subscribed"
kill -STOP $slow
kill -KILL $gone

start=$(emitted)
for i in 1 2 3 4 5; do
	echo 2500 > $RINGTAP_TEST/burst
	sleep 1
done
n=$(( $(emitted) - start ))
expect_eq "emitted" $n 25000
kill -CONT $slow
# Caught up before the stop (its output is buffered: nearly all of it seen).
wait_lines /tmp/slow.out 'ringtap_test:ringtap_test' $((n - 1000)) 60
kill -INT $daemon
wait_or_dump $daemon 30 || fail "ringtapd exit status $?: $(cat /tmp/d.err)"
for c in $a $b $slow; do wait_or_dump $c 60; done
cat /tmp/d.err

expect_eq "A records" "$(count /tmp/a.out 'ringtap_test:ringtap_test')" $n
expect_eq "A distinct (cpu, seq)" \
	"$(sed -n 's/.* seq=\([0-9]*\) cpu=\([0-9]*\) .*/\2:\1/p' /tmp/a.out | sort -u | wc -l)" $n
expect_eq "A lost lines" "$(grep -c '^#' /tmp/a.out)" 0
grep -q "^\[001\] ringtap_test:ringtap_test pid=[0-9]* seq=7 cpu=1 tag=rtaptest msg=cpu1 seq 7 xxxxxxx$" /tmp/a.out ||
	fail "A: payload of cpu1 seq 7"
pass "A: payload of cpu1 seq 7"

expect_eq "B records (CPU 1 only)" "$(count /tmp/b.out 'ringtap_test:ringtap_test')" $((n / 2))
expect_eq "B records from CPU 0" "$(grep -c '^\[000\]' /tmp/b.out)" 0

got=$(count /tmp/slow.out 'ringtap_test:ringtap_test')
lost=$(sed -n 's/^# cpu [0-9]*: lost \([0-9]*\) events.*/\1/p' /tmp/slow.out | awk '{ s += $1 } END { print s + 0 }')
echo "note: slow client: $got delivered, $lost reported lost"
expect_eq "slow: lost while stopped, its queue full" $lost 0
expect_eq "slow: delivered" $got $n
expect_eq "slow: distinct (cpu, seq)" \
	"$(sed -n 's/.* seq=\([0-9]*\) cpu=\([0-9]*\) .*/\2:\1/p' /tmp/slow.out | sort -u | wc -l)" $n

# --- events switched off when no subscription names them any more ---------------
# The settings' events stay on; a subscriber's go when the last one naming them
# leaves (or updates them away).
ringtapd -s $sock -e ringtap_test:ringtap_test 2> /tmp/d2.err &
daemon=$!
wait_lines /tmp/d2.err "listening on $sock"
ev=$T/instances/ringtap/events
# Switched on in bulk: the whole timer system by its own enable file, the two
# sched events in one write to set_event.
ringtap stream --transport=socket -s $sock -e 'sched:sched_switch,sched:sched_wakeup,timer:*' --no-time \
	> /dev/null 2> /tmp/s.err &
s=$!
wait_lines /tmp/d2.err subscribed 1
expect_eq "sched_switch enabled while subscribed" "$(cat $ev/sched/sched_switch/enable)" 1
expect_eq "sched_wakeup enabled while subscribed" "$(cat $ev/sched/sched_wakeup/enable)" 1
expect_eq "sched_waking (not asked for)" "$(cat $ev/sched/sched_waking/enable)" 0
expect_eq "the timer system, every event of it" "$(cat $ev/timer/enable)" 1
kill -INT $s
wait $s || true
wait_lines /tmp/d2.err "sched:sched_switch switched off" 1 20
wait_lines /tmp/d2.err "timer:hrtimer_start switched off" 1 20
expect_eq "sched_switch enabled after its subscriber left" "$(cat $ev/sched/sched_switch/enable)" 0
expect_eq "the timer system after its subscriber left" "$(cat $ev/timer/enable)" 0
expect_eq "ringtap_test (from the settings) still enabled" \
	"$(cat $ev/ringtap_test/ringtap_test/enable)" 1
kill -INT $daemon
wait_or_dump $daemon 30 || fail "ringtapd exit status $?: $(tail -n 5 /tmp/d2.err)"

# --- a subscriber's filter in the kernel -----------------------------------------
# When every subscriber of an event filters it, the OR of their filters goes
# to the event's filter file: the kernel writes only what someone keeps. One
# without a filter takes the kernel's away again. (Events the settings
# enable get no kernel filter: a daemon without -e.)
ringtapd -s $sock 2> /tmp/d3.err &
daemon=$!
wait_lines /tmp/d3.err "listening on $sock"
tf=$ev/ringtap_test/ringtap_test/filter
# Sequence numbers count per CPU since boot: the next ten of each CPU.
kept() { awk '/^entries:/ { e += $2 } /^read events:/ { e += $3 } END { print e + 0 }' \
	$T/instances/ringtap/per_cpu/cpu*/stats; }
s0=$(sed -n 's/^cpu0 //p' $RINGTAP_TEST/emitted) s1=$(sed -n 's/^cpu1 //p' $RINGTAP_TEST/emitted)
filter="(cpu == 0 && seq < $((s0 + 10))) || (cpu == 1 && seq < $((s1 + 10)))"
ringtap stream --transport=socket -s $sock -e ringtap_test:ringtap_test --filter "$filter" --no-time \
	> /tmp/f.out 2> /tmp/f.err &
f=$!
wait_lines /tmp/d3.err "ringtap_test:ringtap_test: kernel filter '" 1 20
grep -q "seq < $((s0 + 10))" $tf || fail "the kernel's filter file says: $(cat $tf)"
start=$(emitted) before=$(kept)
echo 2500 > $RINGTAP_TEST/burst
sleep 2
emitted_now=$(( $(emitted) - start )) kept_now=$(( $(kept) - before ))
kill -INT $f
wait $f || true
expect_eq "filtered records (the next ten of each CPU)" \
	"$(grep -c 'ringtap_test:ringtap_test' /tmp/f.out)" 20
echo "note: $emitted_now emitted, the kernel kept $kept_now"
expect_eq "events the kernel wrote into the buffer" $kept_now 20
ringtap stream --transport=socket -s $sock -e ringtap_test:ringtap_test --filter 'seq < 10' --no-time \
	> /dev/null 2>&1 &
f=$!
wait_lines /tmp/d3.err "ringtap_test:ringtap_test: kernel filter '" 2 20
ringtap stream --transport=socket -s $sock -e ringtap_test:ringtap_test --no-time > /dev/null 2>&1 &
g=$!
wait_lines /tmp/d3.err "ringtap_test:ringtap_test: kernel filter none" 1 20
grep -q '^none' $tf || fail "with an unfiltered subscriber the kernel still filters: $(cat $tf)"
pass "kernel filter for one filtered subscriber, none once an unfiltered one came"
kill -INT $f $g
wait $f $g || true
kill -INT $daemon
wait_or_dump $daemon 30 || fail "ringtapd exit status $?: $(tail -n 5 /tmp/d3.err)"

# --- a subscriber's pids in the kernel -------------------------------------------
# When every subscriber selects pids, the union goes to the instance's
# set_event_pid: another process's events are not even written. Two shells
# fork the same number of times; only one of them is subscribed to.
ringtapd -s $sock 2> /tmp/d4.err &
daemon=$!
wait_lines /tmp/d4.err "listening on $sock"
forks() { sh -c "sleep 3; for i in 1 2 3 4 5 6 7 8 9 10; do ringtapd --version > /dev/null 2>&1; done" & }
forks; a=$!
forks; b=$!
ringtap stream --transport=socket -s $sock -e sched:sched_process_fork --pids $a --no-time > /tmp/p.out 2> /tmp/p.err &
p=$!
wait_lines /tmp/d4.err subscribed 1 20
wait_lines /tmp/d4.err "kernel pid filter: $a" 1 20
expect_eq "set_event_pid" "$(cat $T/instances/ringtap/set_event_pid)" $a
before=$(kept)
wait $a $b
sleep 1
kept_now=$(( $(kept) - before ))
kill -INT $p
wait_or_dump $p 30 || true
expect_eq "fork records of the subscribed shell" "$(grep -c "pid=$a " /tmp/p.out)" 10
expect_eq "fork records the kernel wrote (the other shell's 10 not)" $kept_now 10
ringtap stream --transport=socket -s $sock -e sched:sched_process_fork --no-time > /dev/null 2>&1 &
p=$!
wait_lines /tmp/d4.err subscribed 2 20
wait_lines /tmp/d4.err "kernel pid filter: none" 1 20
expect_eq "set_event_pid with a subscriber of every pid" "$(cat $T/instances/ringtap/set_event_pid)" ""
kill -INT $p
wait_or_dump $p 30 || true
kill -INT $daemon
wait_or_dump $daemon 30 || fail "ringtapd exit status $?: $(tail -n 5 /tmp/d4.err)"
