# Guest: `ringtap record` captures the raw stream; the capture reads back
# with protobuf and libtraceevent alone, every test event in it; on a full
# disk the recorder stops with a clear error and the file stays readable.
sock=/run/ringtap/ringtapd.sock
ringtapd -s $sock 2> /tmp/d.err &
daemon=$!
wait_lines /tmp/d.err "listening on"
mkdir -p /tmp/full && mount -t tmpfs -o size=64k tmpfs /tmp/full
ringtap record -s $sock -e ringtap_test:ringtap_test -o /tmp/capture 2> /tmp/r.err &
r=$!
ringtap record -s $sock -e ringtap_test:ringtap_test -o /tmp/full/capture 2> /tmp/full.err &
full=$!
wait_lines /tmp/d.err subscribed 2
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
