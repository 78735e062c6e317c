# Guest with systemd as PID 1: events a crashed ringtapd had taken from the
# kernel and not put in its ring are reported lost, exactly. ringtapd is
# stopped (SIGSTOP) with its CPUs read to the end, a burst is emitted, and
# a thief takes one CPU's whole burst from the instance's trace_pipe_raw, as
# a ringtapd killed between its read and its ring's commit would have; then
# ringtapd is killed. The next one finds the kernel's count of events
# handed over ahead of its ring's and says so; both subscribers (a decoded
# `ringtap stream` on the socket and one reading the page ring, with
# --reconnect) resume, and when that CPU's next page comes each is told the
# stolen events lost, before it: on every CPU, delivered + reported lost =
# emitted, nothing missing without a report, nothing twice.
rate=${RATE:-2000}
ncpus=$(nproc)
inst=$T/instances/ringtap

read_events() { sed -n 's/^read events: //p' "$inst/per_cpu/cpu$1/stats"; }

mkdir -p /etc/ringtap
echo "buffer_kb = 1024" > /etc/ringtap/ringtapd.conf
systemctl start ringtapd.socket ringtapd.service ||
	fail "ringtapd did not start: $(journal | tail -n 20)"
ringtap stream -e ringtap_test:ringtap_test --no-time --reconnect > /tmp/s.txt 2> /tmp/s.err &
client=$!
ringtap stream -e ringtap_test:ringtap_test --no-time --reconnect --transport=ring \
	> /tmp/r.txt 2> /tmp/r.err &
ring=$!
wait_for 30 sh -c '[ $(journalctl -u ringtapd -o cat | grep -c subscribed) = 2 ]' ||
	fail "no subscription: $(journal | tail -n 20; cat /tmp/s.err /tmp/r.err)"
mark_emitted
echo "$rate" > $RINGTAP_TEST/rate
sleep 2
echo 0 > $RINGTAP_TEST/rate
sleep 2

old=$(unit_pid)
kill -STOP "$old"
echo "$rate" > $RINGTAP_TEST/rate
sleep 1
echo 0 > $RINGTAP_TEST/rate
sleep 1
# The CPU the burst left most events on (the test source's threads move).
cpu=0 most=0
for c in $(seq 0 $((ncpus - 1))); do
	n=$(sed -n 's/^entries: //p' "$inst/per_cpu/cpu$c/stats")
	[ "$n" -gt "$most" ] && cpu=$c most=$n
done
before=$(read_events $cpu)
# Every page it holds, until the read would wait.
dd if="$inst/per_cpu/cpu$cpu/trace_pipe_raw" of=/tmp/stolen bs=4096 iflag=nonblock \
	2> /tmp/dd.err
stolen=$(($(read_events $cpu) - before))
[ "$stolen" -gt 0 ] ||
	fail "the thief took nothing: $(cat /tmp/dd.err; cat $inst/per_cpu/cpu$cpu/stats)"
echo "note: $stolen events taken from cpu $cpu ($(stat -c %s /tmp/stolen) bytes)," \
	"ringtapd stopped"
kill -KILL "$old"
kill -CONT "$old" 2> /dev/null
wait_for 60 sh -c "[ \"\$(systemctl show -p NRestarts --value ringtapd)\" = 1 ] &&
	[ \"\$(systemctl is-active ringtapd)\" = active ]" ||
	fail "not restarted: $(systemctl status ringtapd --no-pager -l | tail -n 20)"
new=$(unit_pid)
wait_for 30 sh -c "journalctl _PID=$new -o cat | grep -q 'resumed from the page ring'" ||
	fail "the stream did not resume: $(journalctl _PID="$new" -o cat; cat /tmp/s.err)"
wait_for 30 sh -c "journalctl _PID=$new -o cat | grep -q 'page ring on from its place'" ||
	fail "the ring reader did not resume: $(journalctl _PID="$new" -o cat; cat /tmp/r.err)"
journalctl _PID="$new" -o cat | grep "crashed ringtapd" | sed 's/^/note: /'
journalctl _PID="$new" -o cat |
	grep -q "cpu $cpu: the crashed ringtapd took $stolen events from the kernel" ||
	fail "ringtapd did not count the $stolen events: $(journalctl _PID="$new" -o cat)"
pass "the next ringtapd counted the $stolen events its ring does not hold"

# Both streaming live again when the CPU's next page comes.
sleep 2
echo "$rate" > $RINGTAP_TEST/rate
sleep 2
echo 0 > $RINGTAP_TEST/rate
sleep 3
kill -INT "$client" "$ring"
wait_or_dump "$client" 60
wait_or_dump "$ring" 60
for who in s r; do
	cat /tmp/$who.err
	account_losses /tmp/$who.txt > /tmp/$who.acct
	cat /tmp/$who.acct
	expect_eq "$who: records seen twice, missing without a report" \
		"$(tail -n 1 /tmp/$who.acct)" "dups 0 unreported 0"
	for c in $(seq 0 $((ncpus - 1))); do
		emitted=$(emitted_since $c)
		line=$(grep "^cpu$c " /tmp/$who.acct)
		got=$(echo "$line" | awk '{ print $3 }') lost=$(echo "$line" | awk '{ print $5 }')
		expect_eq "$who: cpu$c: delivered + reported lost, the events emitted" \
			"$((got + lost))" "$emitted"
		want=0
		[ "$c" = "$cpu" ] && want=$stolen
		expect_eq "$who: cpu$c: reported lost" "$lost" "$want"
	done
done
pass "the $stolen events a crashed ringtapd held in no ring were reported lost to both, exactly"
