# Guest: the decoded stream of a fixed test-source run, exported for the host
# to compare across kernel variants (decoded-identical).
mkdir -p /tmp/out
sock=/run/ringtap/ringtapd.sock
ringtapd -s $sock 2> /tmp/d.err &
daemon=$!
wait_lines /tmp/d.err "listening on"
ringtap stream -s $sock -e ringtap_test:ringtap_test --no-time > /tmp/out/decoded.txt 2> /tmp/c.err &
client=$!
wait_lines /tmp/d.err subscribed
echo 500 > $RINGTAP_TEST/burst
kill -INT $daemon
wait_or_dump $daemon 30 || fail "ringtapd: $(cat /tmp/d.err)"
wait_or_dump $client 20 || fail "ringtap: $(cat /tmp/c.err)"
expect_eq "records" "$(grep -c ringtap_test: /tmp/out/decoded.txt)" 1000
export_dir /tmp/out
