# Guest: `ringtap record -o FILE.dat` (through ringtapd) and `trace-cmd
# record` take the same test-source burst in the same boot; `trace-cmd
# report` on both gives the same event lines (timestamps and process names
# aside: trace-cmd saves its own cmdlines). On a full disk the .dat
# recorder stops with a clear error and its file still reads.
sock=/run/ringtap/ringtapd.sock
ringtapd -s $sock 2> /tmp/d.err &
daemon=$!
wait_lines /tmp/d.err "listening on"
mkdir -p /tmp/full && # Room for the header (kallsyms is ~1 MB here) and a part of the pages.
mount -t tmpfs -o size=1280k tmpfs /tmp/full
cd /tmp
ringtap record -s $sock -e ringtap_test:ringtap_test,ftrace:print -o /tmp/ringtap.dat 2> /tmp/r.err &
r=$!
ringtap record -s $sock -e ringtap_test:ringtap_test -o /tmp/full/ringtap.dat 2> /tmp/full.err &
full=$!
wait_lines /tmp/d.err subscribed 2
# Version 6 as ours: the sizes compare like for like (7 compresses by default).
trace-cmd record --file-version 6 -e ringtap_test:ringtap_test -o /tmp/trace-cmd.dat > /tmp/t.out 2> /tmp/t.err &
tc=$!
wait_tracer "trace-cmd record: $(cat /tmp/t.err)"
sleep 1
echo 2000 > $RINGTAP_TEST/burst
sleep 1
echo 2000 > $RINGTAP_TEST/burst
echo "ringtap marker" > $T/instances/ringtap/trace_marker
sleep 1
kill -INT $tc
wait_or_dump $tc 60 || fail "trace-cmd record: $(cat /tmp/t.err)"
wait_or_dump $full 30 && fail "recording onto a full disk succeeded"
grep -q "No space left on device" /tmp/full.err || fail "no clear error: $(cat /tmp/full.err)"
pass "full disk: $(tail -n1 /tmp/full.err)"
# Ctrl-C on the recorder, as a user stops it: it asks for the cmdlines again.
kill -INT $r
wait_or_dump $r 30 || fail "ringtap record: $(cat /tmp/r.err)"
tail -n2 /tmp/r.err
kill -INT $daemon
wait_or_dump $daemon 30 || fail "ringtapd: $(cat /tmp/d.err)"

# Event lines without the timestamp: "COMM-PID [CPU] EVENT: PAYLOAD" (the
# process names come from the saved cmdlines the daemon sent).
# (The report's text goes to /tmp/report.*: the full disk has no room for it.)
report() {
	_r=/tmp/report.$(echo "$1" | tr / _)
	trace-cmd report -i "$1" > "$_r.txt" 2> "$_r.err" || fail "trace-cmd report $1: $(cat "$_r.err")"
	[ ! -s "$_r.err" ] || fail "trace-cmd report $1 warned: $(cat "$_r.err")"
	sed -n 's/^ *\(.*-[0-9]*\) *\[\([0-9]*\)\] *[0-9.]*: *\(ringtap_test: .*\)$/\1 [\2] \3/p' "$_r.txt"
}
# Each CPU's events in order: across CPUs report merges by timestamp, and the
# two recordings' buffers stamp the same event a few ns apart.
report /tmp/ringtap.dat | sort -s -k2,2 > /tmp/ringtap.lines
report /tmp/trace-cmd.dat | sort -s -k2,2 > /tmp/trace-cmd.lines
expect_eq "trace-cmd's events" "$(grep -c . /tmp/trace-cmd.lines)" 8000
expect_eq "ringtap's events" "$(grep -c . /tmp/ringtap.lines)" 8000
cmp -s /tmp/ringtap.lines /tmp/trace-cmd.lines ||
	fail "event lines differ: $(diff /tmp/ringtap.lines /tmp/trace-cmd.lines | head -n 12 | tr "\n" "|")"
pass "trace-cmd report: the same 8000 event lines from both recordings"
grep -q 'EVENTS DROPPED' /tmp/report._tmp_ringtap.dat.txt && fail "ringtap's recording reports drops"
# The marker's ip printed as a function name: the daemon sent kallsyms.
grep -q 'print: *tracing_mark_write: ringtap marker' /tmp/report._tmp_ringtap.dat.txt ||
	fail "marker without its symbol: $(grep 'ringtap marker' /tmp/report._tmp_ringtap.dat.txt)"
pass "kallsyms in the file: $(grep -o 'print: *tracing_mark_write: ringtap marker' /tmp/report._tmp_ringtap.dat.txt)"
echo "note: file sizes: ringtap.dat $(wc -c < /tmp/ringtap.dat) B, trace-cmd.dat $(wc -c < /tmp/trace-cmd.dat) B (both version 6, uncompressed); ringtap: $(grep -o '[0-9]* pages' /tmp/r.err | tail -n1)"

n=$(report /tmp/full/ringtap.dat | grep -c .)
[ "$n" -gt 0 ] || fail "the truncated recording holds no event"
pass "full disk: the truncated trace.dat reads, $n events up to where the disk filled"

# ringtapd killed and started again mid-recording: `ringtap record
# --reconnect` goes on in the same file and counts the gap. The recorder
# asks 100 ms: a killed daemon passes nothing on, so each burst must be
# out before the second that follows it ends.
ringtapd -s $sock 2> /tmp/d2.err &
daemon=$!
wait_lines /tmp/d2.err "listening on"
ringtap record -s $sock -e ringtap_test:ringtap_test -o /tmp/again.dat --reconnect \
	--max-latency=100 2> /tmp/a.err &
rec=$!
wait_lines /tmp/d2.err subscribed
echo 1000 > $RINGTAP_TEST/burst
sleep 1
kill -KILL $daemon
ringtapd -s $sock 2> /tmp/d3.err &
daemon=$!
wait_lines /tmp/d3.err subscribed
echo 1000 > $RINGTAP_TEST/burst
sleep 1
kill -INT $daemon
wait_or_dump $daemon 30 || fail "ringtapd: $(cat /tmp/d3.err)"
sleep 0.5
kill -INT $rec
wait_or_dump $rec 30 || fail "ringtap record --reconnect: $(cat /tmp/a.err)"
grep -q "reconnected after" /tmp/a.err || fail "no reconnection: $(cat /tmp/a.err; ls -l /tmp/a.err /tmp/again.dat; cat /tmp/d2.err /tmp/d3.err)"
expect_eq "events across the restart" "$(report /tmp/again.dat | grep -c .)" 4000
trace-cmd report --stat -i /tmp/again.dat 2>/dev/null | grep -q "ringtap reconnections: 1" ||
	fail "the gap is not in the file's stats: $(trace-cmd report --stat -i /tmp/again.dat)"
pass "recording across a daemon restart: 4000 events, the gap in each CPU's stats"
