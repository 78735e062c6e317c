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
# Without --max-latency a recorder asks a second: drained every 750 ms, not 75.
grep -q "draining every 750 ms" /tmp/d.err || fail "no 750 ms period: $(cat /tmp/d.err)"
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

# --- cut mid-stream under load: nothing delivered is missing from the file ----
# The recorder stopped by a signal while records flow asks ringtapd to end
# the stream and reads it to its end: every record ringtapd says it
# delivered to it is in the file, exactly.
ringtapd -s $sock 2> /tmp/d2.err &
daemon=$!
wait_lines /tmp/d2.err "listening on"
# Over the socket: ringtapd counts what it delivers to a socket subscriber only.
ringtap record --transport=socket -s $sock -e ringtap_test:ringtap_test -o /tmp/cut.cap \
	2> /tmp/cut.err &
r=$!
wait_lines /tmp/d2.err subscribed
echo 20000 > $RINGTAP_TEST/rate
sleep 3
kill -INT $r
wait_or_dump $r 30 || fail "ringtap record after a signal: $(cat /tmp/cut.err)"
echo 0 > $RINGTAP_TEST/rate
wait_lines /tmp/d2.err "ringtap record.*records delivered"
delivered=$(sed -n 's/.*ringtap record.*; \([0-9]*\) records delivered.*/\1/p' /tmp/d2.err | tail -n1)
infile=$(rt-guest-capture-check /tmp/cut.cap | sed -n 's/.* records=\([0-9]*\) .*/\1/p')
echo "note: $(grep 'ringtap record' /tmp/d2.err | tail -n1)"
[ "${delivered:-0}" -gt 0 ] || fail "nothing was delivered under load: $(cat /tmp/d2.err)"
expect_eq "records in the file (ringtapd delivered $delivered)" "$infile" "$delivered"
grep -q "queued and never sent" /tmp/d2.err && fail "records queued and never sent: $(cat /tmp/d2.err)"
kill -INT $daemon
wait_or_dump $daemon 30 || fail "ringtapd: $(cat /tmp/d2.err)"

# --- a long latency bound, then a stop: what the kernel held reaches the file ---
# The recorder accepts a minute (--max-latency=60000): ringtapd drains every
# 45 s. After the first burst's pass the second burst stays in the kernel's
# buffer; the recorder's Bye gets a pass of its own before ringtapd's Bye,
# so both bursts (1000 and 2000 events on each of 2 CPUs) are in the file.
ringtapd -s $sock 2> /tmp/d3.err &
daemon=$!
wait_lines /tmp/d3.err "listening on"
ringtap record -s $sock -e ringtap_test:ringtap_test --max-latency=60000 -o /tmp/late.cap \
	2> /tmp/late.err &
r=$!
wait_lines /tmp/d3.err subscribed
grep -q "draining every 45000 ms" /tmp/d3.err || fail "no 45 s period: $(cat /tmp/d3.err)"
echo 1000 > $RINGTAP_TEST/burst
sleep 2
echo 2000 > $RINGTAP_TEST/burst
sleep 2
kill -INT $r
wait_or_dump $r 30 || fail "ringtap record after a signal: $(cat /tmp/late.err)"
out=$(rt-guest-capture-check /tmp/late.cap | sed 's/^frames=[0-9]* pages=[0-9]* records=[0-9]* //')
expect_eq "both bursts in the file of a recorder with a 60 s bound" "$out" "test_records=6000 lost=0"
kill -INT $daemon
wait_or_dump $daemon 30 || fail "ringtapd: $(cat /tmp/d3.err)"
