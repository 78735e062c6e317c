# Guest half of bench-wire-size: the same test-event bursts reach a decoded,
# a raw and a fixed subscriber and `ringtap record -o FILE.dat`; bytes per
# event of each, against the ring buffer's own (the raw pages).
sock=/run/ringtap/ringtapd.sock
ringtapd -s $sock 2> /tmp/d.err &
daemon=$!
wait_lines /tmp/d.err "listening on"
for e in decoded raw fixed; do
	rt-guest-wirebytes $sock $e > /tmp/w.$e 2>&1 &
done
ringtap record --transport=socket -s $sock -e ringtap_test:ringtap_test -o /tmp/w.dat 2> /tmp/r.err &
rec=$!
wait_lines /tmp/d.err subscribed 4
start=$(sed -n 's/^total //p' $RINGTAP_TEST/emitted)
echo 5000 > $RINGTAP_TEST/burst
sleep 2
n=$(( $(sed -n 's/^total //p' $RINGTAP_TEST/emitted) - start ))
kill -INT $rec
wait_or_dump $rec 30
kill -INT $daemon
wait_or_dump $daemon 30 || fail "ringtapd: $(cat /tmp/d.err)"
wait
cat /tmp/w.decoded /tmp/w.raw /tmp/w.fixed
echo "WIRE trace.dat $(wc -c < /tmp/w.dat) $n 0"
echo "WIRE emitted 0 $n 0"
