# Guest with systemd as PID 1: `systemctl restart ringtapd` while the test
# source emits at a steady rate. The subscribers (decoded `ringtap stream`s
# without --reconnect, on the socket and on the page ring, their lines
# checked by rt-guest-seqcheck) must stay
# connected through every restart and get every sequence number the kernel
# emitted exactly once, with no loss and no gap reported (a second one,
# stopped across the first restart, too: what was queued for it goes with
# it, a frame the socket took part of included, and, its queue full, where
# its catch-up from the page ring stands); the fd store holds
# again only what the new daemon keeps for a crash once it took its share;
# `systemctl stop` then leaves no instance in tracefs and an empty store. The longest silence the subscriber saw
# (the old daemon's last record to the new one's first, at most) is noted.
# Halfway through, the restart is an upgrade: the next daemon is the same
# code built otherwise (unoptimised), which must read all the last one kept.
# A fourth subscriber records RAW pages over TLS from the TCP listener
# (`ringtap record --reconnect`): a TLS session cannot be handed on, so it
# resumes after each restart by its certificate's token, from the page
# ring; its file must hold every event once (rt-guest-capture-check).
restarts=${RESTARTS:-10}
rate=${RATE:-5000}
upgrade_at=$(((restarts + 1) / 2))
ncpus=$(nproc)
echo "note: $(systemctl --version | head -n1)"

emitted() { sed -n "s/^$1 //p" $RINGTAP_TEST/emitted; }

expect_eq "events emitted before the test" "$(emitted total)" 0
# Buffers that outlast the guest's stalls on a loaded host (seconds at a time under TCG):
# what overruns them is reported, exactly, but this test wants none.
tls_listener
# Queues of 512 KiB: the stopped subscriber's fills before the first restart,
# so it is catching up from the page ring when the restart hands it over.
printf 'buffer_kb = 8192\nlisten_tcp = 127.0.0.1:7010\nmax_queue_kb = 512\n' \
	> /etc/ringtap/ringtapd.conf
systemctl start ringtapd.socket || fail "ringtapd.socket did not start"
# Up before the clients: a start slowed by a loaded host would outlast their 5 s for a Welcome.
systemctl start ringtapd.service || fail "ringtapd did not start: $(journal | tail -n 20)"
# subscriber NAME TRANSPORT [OPTION...]: a decoded stream of the test source into
# rt-guest-seqcheck; sets $pid, $checker.
subscriber() {
	local name=$1 transport=$2

	shift 2
	mkfifo /tmp/$name.fifo
	rt-guest-seqcheck "$ncpus" < /tmp/$name.fifo > /tmp/$name.check &
	checker=$!
	ringtap stream -e ringtap_test:ringtap_test --no-time --transport=$transport "$@" \
		> /tmp/$name.fifo 2> /tmp/$name.err &
	pid=$!
}
subscriber a socket
client=$pid a_checker=$checker
# The slow one stops reading across the first restart: its queue goes with
# it, a frame the socket took part of included.
subscriber slow socket
slow=$pid slow_checker=$checker
# A page ring reader: each new daemon copies the ring into one of its own
# and sends it; the reader maps it and reads on at the page it was at.
subscriber ring ring
ring=$pid ring_checker=$checker
# shellcheck disable=SC2086 # $tls_client is a list of options
ringtap record -e ringtap_test:ringtap_test --reconnect $tls_client -o /tmp/tls.cap \
	2> /tmp/tls.err &
tls=$!
wait_for 30 sh -c '[ $(journalctl -u ringtapd -o cat | grep -c subscribed) = 4 ]' ||
	fail "no subscription: $(journal | tail -n 20; cat /tmp/a.err /tmp/slow.err /tmp/ring.err \
		/tmp/tls.err)"
kill -0 "$client" && kill -0 "$slow" && kill -0 "$ring" ||
	fail "a client gave up: $(cat /tmp/a.err /tmp/slow.err /tmp/ring.err)"
journal | grep -q "subscribed: .*reading the page ring" || fail "the ring client reads no ring"
echo "$rate" > $RINGTAP_TEST/rate
sleep 2

for i in $(seq "$restarts"); do
	old=$(unit_pid)
	if [ "$i" = 1 ]; then
		kill -STOP "$slow"
		sleep 4
	fi
	echo "note: restart $i at $(cut -d' ' -f1 /proc/uptime) s"
	# Halfway, an upgrade: a binary built otherwise takes over (renamed in place, as dpkg does).
	if [ "$i" = "$upgrade_at" ]; then
		cp /usr/bin/rt-guest-ringtapd-o0 /usr/sbin/ringtapd.new &&
			mv -f /usr/sbin/ringtapd.new /usr/sbin/ringtapd || fail "installing the upgrade"
	fi
	systemctl restart ringtapd.service || fail "restart $i: $(journal | tail -n 20)"
	[ "$i" != 1 ] || kill -CONT "$slow"
	expect_handed_over "$i" "$old"
	journalctl _PID="$new" -o cat | grep -q ' 3 of 3 subscriber(s) (0 left meanwhile)' ||
		fail "restart $i: $(journalctl _PID="$new" -o cat | grep 'resumed after');" \
			"client: $(cat /tmp/a.err); $(journal | tail -n 12)"
	if [ "$i" = "$upgrade_at" ]; then
		expect_eq "restart $i: the daemon now running" "$(/proc/"$new"/exe --version)" \
			"$(ringtapd --version | sed 's/^\(ringtapd [^ ]*\).*/\1/') (built -O0)"
		pass "restart $i: upgraded to another build, every subscriber kept"
	fi
	kill -0 "$client" 2> /dev/null || fail "restart $i: the client is gone: $(cat /tmp/a.err)"
	kill -0 "$slow" 2> /dev/null || fail "restart $i: the slow client is gone: $(cat /tmp/slow.err)"
	kill -0 "$ring" 2> /dev/null || fail "restart $i: the ring client is gone: $(cat /tmp/ring.err)"
	wait_for 60 sh -c "journalctl _PID=$new -o cat | grep -q 'via collector@.*resumed from the page ring'" ||
		fail "restart $i: the TLS recorder did not resume: $(journalctl _PID="$new" -o cat |
			grep -i 'collector'); $(cat /tmp/tls.err)"
	kill -0 "$tls" 2> /dev/null || fail "restart $i: the TLS recorder gave up: $(cat /tmp/tls.err)"
	journalctl _PID="$new" -o cat | grep -q "(pid $ring uid 0) resumed .*reading the page ring" ||
		fail "restart $i: the ring client was not resumed on a ring: $(journal | tail -n 12)"
	if [ "$i" = 1 ]; then
		owed=$(journalctl _PID="$old" -o cat | grep -F "(pid $slow): " | grep 'bytes owed go with it')
		echo "note: $owed"
		# Whether the socket took part of a frame is the kernel's choice: noted, not required.
		echo "$owed" | grep -q ' [1-9][0-9]* bytes owed' ||
			fail "the stopped subscriber had nothing queued: '$owed'"
		pass "restart 1: a stopped subscriber's queue went with it"
		# Its queue had filled: it goes on catching up from the ring in the new daemon.
		journalctl _PID="$new" -o cat |
			grep -q "(pid $slow uid 0) resumed .*catching up from the page ring" ||
			fail "restart 1: the stopped subscriber was not catching up:" \
				"$(journalctl _PID="$new" -o cat | grep -F "(pid $slow ")"
		pass "restart 1: the stopped subscriber's catch-up from the page ring went with it"
	fi
	# What it took back, gone; what it keeps for a crash, there: each CPU's trace fd, the ring, its state.
	expect_eq "restart $i: the fd store after the new daemon took its share" \
		"$(systemctl show -p NFileDescriptorStore --value ringtapd.service)" $((ncpus + 2))
	sleep 1
done
# Where a restart's time goes (the last one): the old daemon's handover, systemd, the new one's start.
journalctl -o short-monotonic --no-pager | tac | sed '/Stopping ringtapd/q' | tac |
	sed 's/^/note: /'
# The start's first step without the unit's sandbox: exec and the libraries alone.
t0=$(date +%s%N)
ringtapd --version > /dev/null
echo "note: ringtapd --version outside the unit: $((($(date +%s%N) - t0) / 1000000)) ms"
pass "$restarts restarts at $rate events/s: the client stayed connected"

echo 0 > $RINGTAP_TEST/rate
# Two drain periods and more for the last records.
sleep 3
kill -INT "$client" "$slow" "$ring" "$tls"
wait_or_dump "$a_checker" 30
wait_or_dump "$slow_checker" 30
wait_or_dump "$ring_checker" 30
wait_or_dump "$tls" 30 || fail "the TLS recorder: $(cat /tmp/tls.err)"
# check NAME: every sequence number the kernel emitted, once, nothing reported lost.
check() {
	expect_every_seq "$1" /tmp/$1.check
	total=$seq_total
	grep -q "ringtap: $total records, 0 lost" /tmp/$1.err || fail "$1: summary: $(cat /tmp/$1.err)"
	pass "$1: every one of $total events (seq per CPU) delivered once, 0 lost"
}
check a
check slow
check ring
out=$(rt-guest-capture-check --seqs /tmp/tls.cap | sed 's/^frames=[0-9]* pages=[0-9]* records=[0-9]* //')
expect_eq "tls: the capture" "$out" "test_records=$total lost=0 distinct=$total dups=0"
expect_eq "tls: resumptions" "$(grep -c 'and resumed where the stream was' /tmp/tls.err)" "$restarts"
grep -q "gap\|not recorded" /tmp/tls.err && fail "tls: $(cat /tmp/tls.err)"
pass "tls: every one of $total events in the file once, resumed by its certificate $restarts times"
gap=$(sed -n 's/.* longest_gap_ms \([0-9]*\).*/\1/p' /tmp/a.check)
ring_gap=$(sed -n 's/.* longest_gap_ms \([0-9]*\).*/\1/p' /tmp/ring.check)
echo "note: RESTART-FIGURES restarts=$restarts rate=$rate events=$total longest_gap_ms=$gap" \
	"ring_longest_gap_ms=$ring_gap"

# --- a real stop leaves nothing --------------------------------------------------
last=$(unit_pid)
systemctl stop ringtapd.socket ringtapd.service
# The last daemon's report counts from the instance's start, as the kernel's counters do:
# each daemon took its predecessors' counts from the state.
for c in $(seq 0 $((ncpus - 1))); do
	got=$(journalctl _PID="$last" -o cat | sed -n "s/^cpu$c: [0-9]* pages, \([0-9]*\) records.*/\1/p")
	expect_eq "the stop's report: cpu$c's records over $restarts restarts" "$got" "$(emitted cpu$c)"
done
journalctl _PID="$last" -o cat | grep "the kernel handed over" &&
	fail "the stop's report disagrees with the kernel's counters"
pass "the stop's report counts every daemon's records, as the kernel does"
expect_eq "service after stop" "$(systemctl is-active ringtapd.service)" inactive
[ ! -e $T/instances/ringtap ] || fail "the tracefs instance is still there after stop"
expect_eq "fd store after stop" "$(systemctl show -p NFileDescriptorStore --value ringtapd.service)" 0
pass "stop removed the tracefs instance"
journal -p warning | grep -v -i "lost\b" | grep -i -E 'warn|error|fail' && fail "journal warnings"
pass "journal: $(journal | grep -c .) lines"
