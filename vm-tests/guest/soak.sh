# Guest: a soak. The test source at a steady rate for SOAK_SECONDS while
# rt-guest-soak keeps one subscriber and has up to SOAK_TRANSIENTS others of
# every encoding connect, Update and leave at random (soak-client.c). Then:
# every subscriber's records are whole (delivered + reported lost = its
# span, per CPU, exactly); the kept one's equal what the source emitted;
# ringtapd's descriptors and tracefs instance are back to their idle state,
# its anonymous memory within SOAK_RSS_SLACK_KB of idle; stopped, it removes its instance.
sock=/run/ringtap/ringtapd.sock
seconds=${SOAK_SECONDS:-120} rate=${SOAK_RATE:-500} transients=${SOAK_TRANSIENTS:-12}
# Freed memory glibc keeps for reuse is not growth; a leak of a few bytes a
# connection over ~1000 connections is.
slack_kb=${SOAK_RSS_SLACK_KB:-512}
inst=$T/instances/ringtap
emitted_on() { sed -n "s/^$1 //p" $RINGTAP_TEST/emitted; }
# Anonymous memory: the heap and stacks. File pages (code first run late in
# the soak) are not growth.
rss_kb() { sed -n 's/^RssAnon:[\t ]*\([0-9]*\) kB/\1/p' /proc/$daemon/status; }
vmrss_kb() { sed -n 's/^VmRSS:[\t ]*\([0-9]*\) kB/\1/p' /proc/$daemon/status; }
fds() { ls /proc/$daemon/fd | wc -l; }
# What ringtapd may change in its instance, one line each.
tracefs_state() {
	for f in tracing_on buffer_size_kb buffer_percent set_event set_event_pid \
		set_event_notrace_pid events/ringtap_test/ringtap_test/enable \
		events/ringtap_test/ringtap_test/filter; do
		echo "$f: $(tr '\n' ' ' < $inst/$f)"
	done
}
# On a failure: what the kernel counted, and what ringtapd did to the instance.
soak_diagnose() {
	for c in 0 1; do echo "cpu$c stats: $(tr '\n' ' ' < $inst/per_cpu/cpu$c/stats)"; done
	grep -v "subscribed\|left\|Hello\|updated" /tmp/d.err | tail -n 30
}
# soak SECONDS OUT: one run of rt-guest-soak, the kept subscriber let go at the end.
soak_start() {
	rt-guest-soak $sock $1 $transients > $2 2> $2.err &
	soak=$!
	wait_lines $2 "kept subscribed" 1 30
}
soak_end() {
	wait_lines $1 "transients done" 1 $((${2:-0} + 180))
	echo 0 > $RINGTAP_TEST/rate
	# What the source wrote last reaches the kept one within the latency bound.
	sleep 2
	kill -USR1 $soak
	wait_or_dump $soak 120 || {
		grep "FAIL\| gap: " $1 | head -20
		soak_diagnose
		fail "rt-guest-soak: $(tail -3 $1)"
	}
}

# A full queue catches up from the page ring: 4 slots per CPU, so that the
# slow quarter is lapped and loses (the default ring would hold it all).
ringtapd -s $sock --max-clients 64 --max-queue-kb 128 --ring-pages=4 2> /tmp/d.err &
daemon=$!
wait_lines /tmp/d.err "listening on"

# A short run first: what the first subscribers of each kind allocate is the
# idle size of a daemon that has served, not growth.
soak_start 5 /tmp/warm.out
echo $rate > $RINGTAP_TEST/rate
soak_end /tmp/warm.out 5
sleep 1
idle_fds=$(fds) idle_rss=$(rss_kb) idle_vmrss=$(vmrss_kb) idle_state=$(tracefs_state)

cpu0_0=$(emitted_on cpu0) cpu1_0=$(emitted_on cpu1)
t0=$(date +%s)
soak_start $seconds /tmp/soak.out
echo $rate > $RINGTAP_TEST/rate
rss_max=$idle_rss fds_max=$idle_fds last_mark=$t0 timeline=""
while ! grep -q "transients done" /tmp/soak.out; do
	kill -0 $soak 2>/dev/null || break
	r=$(rss_kb) n=$(fds)
	[ "$r" -gt $rss_max ] && rss_max=$r
	[ "$n" -gt $fds_max ] && fds_max=$n
	# Every 30 s, for the long run's record: growth or a plateau.
	now=$(date +%s)
	if [ $(( now - last_mark )) -ge 30 ]; then
		timeline="$timeline $((now - t0))s:${r}kB"
		last_mark=$now
	fi
	sleep 2
done
soak_end /tmp/soak.out $seconds
t1=$(date +%s)
cpu0=$(( $(emitted_on cpu0) - cpu0_0 )) cpu1=$(( $(emitted_on cpu1) - cpu1_0 ))

grep "FAIL\| gap: " /tmp/soak.out | head -20
fails=$(grep -c FAIL /tmp/soak.out)
[ "$fails" = 0 ] || soak_diagnose
expect_eq "subscribers with records missing, doubled or unaccounted for" "$fails" 0
summary=$(grep "transients done" /tmp/soak.out)
# sub I ENCODING SELECTION SPEED cpuC first F last L delivered D lost-between M lost-outside O ...
awk '$1 == "sub" && $3 != "FAIL:" { d += $12; b += $14; o += $16; if (!seen[$2]++) n[$3 " " $5]++ }
	END {
		printf "note: records delivered %d, reported lost between them %d, outside %d;", d, b, o
		for (k in n) printf " %s %d", k, n[k]
		printf "\n"
	}' /tmp/soak.out
lost_subs=$(awk '$1 == "sub" && $3 != "FAIL:" && $14 > 0 { print $2 }' /tmp/soak.out | sort -u | wc -l)
[ "$lost_subs" -gt 0 ] || fail "no subscriber lost anything: the slow ones did not fall behind"
pass "$lost_subs subscribers lost records, each loss reported where it happened"

k0=$(awk '$1 == "kept" && $2 == "cpu0" { print $4 + $6 }' /tmp/soak.out)
k1=$(awk '$1 == "kept" && $2 == "cpu1" { print $4 + $6 }' /tmp/soak.out)
expect_eq "kept subscriber, cpu0: delivered + lost = emitted" "$k0" $cpu0
expect_eq "kept subscriber, cpu1: delivered + lost = emitted" "$k1" $cpu1

# Back to idle: the daemon closes what the clients left within a moment.
for _ in $(seq 50); do [ "$(fds)" = $idle_fds ] && break; sleep 0.2; done
end_fds=$(fds) end_rss=$(rss_kb) end_vmrss=$(vmrss_kb) end_state=$(tracefs_state)
echo "note: soak $((t1 - t0)) s at $rate events/s: emitted cpu0 $cpu0 cpu1 $cpu1; $summary"
echo "note: ringtapd RSS (VmRSS) idle $idle_vmrss kB, after $end_vmrss kB; anonymous idle $idle_rss kB, max $rss_max kB, after $end_rss kB; descriptors idle $idle_fds, max $fds_max, after $end_fds"
expect_eq "ringtapd's descriptors after the soak" $end_fds $idle_fds
[ "$end_rss" -le $((idle_rss + slack_kb)) ] ||
	fail "ringtapd's anonymous memory grew from $idle_rss to $end_rss kB"
echo "note: ringtapd anonymous memory while soaking:$timeline"
pass "ringtapd's anonymous memory after the soak within $slack_kb kB of idle"
if [ "$end_state" != "$idle_state" ]; then
	echo "idle:"; echo "$idle_state"; echo "after:"; echo "$end_state"
	fail "the tracefs instance is not as it was idle"
fi
pass "tracefs instance as it was idle (events off, no filter, no pids)"
kill -INT $daemon
wait_or_dump $daemon 30 || fail "ringtapd exit status $?: $(tail -n 5 /tmp/d.err)"
daemon_accounted /tmp/d.err
[ ! -d $inst ] || fail "ringtapd left its instance behind"
pass "instance removed at the stop"
