# Guest with systemd as PID 1: restarts that outrun the kernel's buffer.
# A 64 KiB per-CPU buffer and the test source at 20,000 events/s: a
# restart's silence (half a second under TCG) holds ten times what the
# buffer does, so each restart overruns it. The subscriber (a decoded
# `ringtap stream` without --reconnect) stays connected and is told exactly
# what was lost: on every CPU, the distinct sequence numbers it got plus the
# losses reported to it equal what the kernel emitted, none twice, and
# every sequence number missing was reported lost before the next one came.
restarts=${RESTARTS:-3}
rate=${RATE:-20000}
ncpus=$(nproc)


mkdir -p /etc/ringtap
echo "buffer_kb = 64" > /etc/ringtap/ringtapd.conf
systemctl start ringtapd.socket ringtapd.service || fail "ringtapd did not start: $(journal | tail -n 20)"
ringtap stream -e ringtap_test:ringtap_test --no-time --transport=socket > /tmp/s.txt 2> /tmp/s.err &
client=$!
wait_for 30 sh -c 'journalctl -u ringtapd -o cat | grep -q subscribed' ||
	fail "no subscription: $(journal | tail -n 20; cat /tmp/s.err)"
mark_emitted
echo "$rate" > $RINGTAP_TEST/rate
sleep 1
for i in $(seq "$restarts"); do
	old=$(unit_pid)
	systemctl restart ringtapd.service || fail "restart $i: $(journal | tail -n 20)"
	expect_handed_over "$i" "$old"
	kill -0 "$client" 2> /dev/null || fail "restart $i: the client is gone: $(cat /tmp/s.err)"
	sleep 1
done
echo 0 > $RINGTAP_TEST/rate
sleep 3
kill -INT "$client"
wait_or_dump "$client" 60
cat /tmp/s.err
account_losses /tmp/s.txt > /tmp/acct
cat /tmp/acct
expect_eq "records seen twice, missing without a report" "$(tail -n 1 /tmp/acct)" "dups 0 unreported 0"
all_lost=0
for c in $(seq 0 $((ncpus - 1))); do
	emitted=$(emitted_since $c)
	line=$(grep "^cpu$c " /tmp/acct)
	got=$(echo "$line" | awk '{ print $3 }') lost=$(echo "$line" | awk '{ print $5 }')
	expect_eq "cpu$c: delivered + reported lost, the events emitted during the run" \
		"$((got + lost))" "$emitted"
	all_lost=$((all_lost + lost))
done
[ "$all_lost" -gt 0 ] || fail "no restart outran the buffer: nothing was lost"
pass "$restarts restarts outran a 64 KiB buffer: $all_lost events lost, each reported, exactly"
