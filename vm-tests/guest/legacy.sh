# Guest: a reader with the 2012 layout compiled in reads the test events
# right through the FIXED encoding on every kernel; walking the raw pages
# itself, it reads them wrong on the stock kernel (the 2012 breakage).
variant=$(cat /variant)
sock=/run/ringtap/ringtapd.sock
ringtapd -s $sock 2> /tmp/d.err &
daemon=$!
wait_lines /tmp/d.err "listening on"
rt-guest-legacy-reader fixed $sock > /tmp/fixed.txt 2>&1 &
f=$!
rt-guest-legacy-reader raw $sock > /tmp/raw.txt 2>&1 &
r=$!
wait_lines /tmp/d.err subscribed 2
echo 300 > $RINGTAP_TEST/burst
kill -INT $daemon
wait_or_dump $daemon 30 || fail "ringtapd: $(cat /tmp/d.err)"
wait_or_dump $f 20
wait_or_dump $r 20
cat /tmp/fixed.txt /tmp/raw.txt
expect_eq "fixed" "$(cat /tmp/fixed.txt)" "legacy-reader fixed: 600 events, 600 read right, 0 wrong"
case $variant in
stock)	want="legacy-reader raw: 600 events, 0 read right, 600 wrong" ;;
# padded is the 2012 layout; on rt the u64 first field lands at 16 as well
*)	want="legacy-reader raw: 600 events, 600 read right, 0 wrong" ;;
esac
expect_eq "raw ($variant)" "$(cat /tmp/raw.txt)" "$want"
