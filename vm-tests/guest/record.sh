# Guest: `ringtap record` captures the raw stream; the capture reads back
# with protobuf and libtraceevent alone, every test event in it; on a full
# disk the recorder stops with a clear error and the file stays readable.
sock=/run/ringtap/ringtapd.sock
ringtapd -s $sock 2> /tmp/d.err &
daemon=$!
i=0
while ! grep -q "listening on" /tmp/d.err; do i=$((i + 1)); [ $i -lt 100 ] || fail "no daemon"; sleep 0.1; done
mkdir -p /tmp/full && mount -t tmpfs -o size=64k tmpfs /tmp/full
ringtap record -s $sock -e ringtap_test:ringtap_test -o /tmp/capture 2> /tmp/r.err &
r=$!
ringtap record -s $sock -e ringtap_test:ringtap_test -o /tmp/full/capture 2> /tmp/full.err &
full=$!
i=0
while [ "$(grep -c subscribed /tmp/d.err)" -lt 2 ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "recorders did not subscribe: $(cat /tmp/d.err)"; sleep 0.1
done
echo 2000 > $RINGTAP_TEST/burst
wait_or_dump $full 30 && fail "recording onto a full disk succeeded"
grep -q "No space left on device" /tmp/full.err || fail "no clear error: $(cat /tmp/full.err)"
pass "full disk: $(tail -n1 /tmp/full.err)"
out=$(rt-guest-capture-check /tmp/full/capture) || fail "the truncated capture does not read: $out"
pass "truncated capture reads: $out"
kill -INT $daemon
wait_or_dump $daemon 30 || fail "ringtapd: $(cat /tmp/d.err)"
wait_or_dump $r 30 || fail "ringtap record: $(cat /tmp/r.err)"
cat /tmp/r.err
out=$(rt-guest-capture-check /tmp/capture | sed 's/^frames=[0-9]* pages=[0-9]* records=[0-9]* //')
expect_eq "capture" "$out" "test_records=4000 lost=0"
