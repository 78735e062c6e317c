# Guest with systemd as PID 1 (run-vm -r): ringtapd installed as a package
# would be, started by socket activation. Checks what `systemctl start
# ringtapd` users meet: the group and socket, activation by a client,
# the STATUS= line, the capability set (dropped by the daemon without a
# failure), a Prometheus scrape of the exporter's socket unit, the journal's
# start line with the layout, a reload that keeps
# the subscriber, SIGKILL -> restart -> the reconnecting client told of the
# gap, a reloaded wake_percent written while records flow, and stop
# removing the instance.
sock=/run/ringtap/ringtapd.sock
variant=$(cat /variant)
echo "note: $(systemctl --version | head -n1)"

records() { grep -c 'ringtap_test:ringtap_test' /tmp/a.out; }

getent group ringtap > /dev/null || fail "sysusers did not create the ringtap group"
systemctl start ringtapd.socket || fail "ringtapd.socket did not start"
expect_eq "socket mode and group" "$(stat -c '%a %G' $sock)" "660 ringtap"
expect_eq "service before any client" "$(systemctl is-active ringtapd.service)" inactive

# --- socket activation ------------------------------------------------------
ringtap stream -e ringtap_test:ringtap_test,ftrace:print --no-time --reconnect \
	> /tmp/a.out 2> /tmp/a.err &
client=$!
wait_for 30 sh -c 'journalctl -u ringtapd -o cat | grep -q subscribed' ||
	fail "no subscription: $(systemctl status ringtapd --no-pager -l; journal | tail -n 20; cat /tmp/a.err)"
expect_eq "service after a client connected" "$(systemctl is-active ringtapd.service)" active
pid=$(unit_pid)

# --- what the daemon may do --------------------------------------------------
# CAP_SYSLOG only (bit 34): /proc/kallsyms shows addresses to it, which pointer
# fields are decoded with. tracefs needs no capability: its files are root's.
cap() { sed -n "s/^$1:\t//p" /proc/$pid/status; }
expect_eq "effective capabilities" "$(cap CapEff)" 0000000400000000
expect_eq "permitted capabilities" "$(cap CapPrm)" 0000000400000000
expect_eq "inheritable capabilities" "$(cap CapInh)" 0000000000000000
expect_eq "ambient capabilities" "$(cap CapAmb)" 0000000000000000
expect_eq "bounding set" "$(cap CapBnd)" 0000000400000000
expect_eq "no_new_privs" "$(cap NoNewPrivs)" 1
expect_eq "seccomp filter mode" "$(cap Seccomp)" 2
# The daemon's own drop works under the unit's system call filter too (it
# refuses capset(), @privileged): nothing failed, nothing was kept.
journal | grep -q "dropping capabilities" &&
	fail "under the unit: $(journal | grep 'dropping capabilities')"
pass "capabilities: CAP_SYSLOG alone, dropped without a failure"

# --- records --------------------------------------------------------------------
echo 1000 > $RINGTAP_TEST/burst
echo "ringtap systemd test" > $T/instances/ringtap/trace_marker
wait_for 30 sh -c '[ $(grep -c ringtap_test:ringtap_test /tmp/a.out) -ge 2000 ]' ||
	fail "records: $(records) of 2000"
expect_eq "records before the restart" "$(records)" 2000
expect_eq "trace_marker records" "$(grep -c 'ftrace:print .*buf=ringtap systemd test' /tmp/a.out)" 1
# A pointer field holds a kernel address: /proc/kallsyms shows the daemon
# addresses (CAP_SYSLOG), so the field is decoded to the function's name.
ringtap stream -e timer:hrtimer_expire_entry -n 3 --no-time > /tmp/t.out 2> /tmp/t.err ||
	fail "timer client: $(cat /tmp/t.err)"
grep -q 'function=0x[0-9a-f]*<[a-z_]' /tmp/t.out || fail "pointer field not decoded to a symbol: $(cat /tmp/t.out)"
pass "pointer field decoded to a symbol: $(grep -o 'function=[^ ]*' /tmp/t.out | head -n1)"

# --- STATUS= ----------------------------------------------------------------------
wait_for 15 sh -c 'systemctl show -p StatusText --value ringtapd | grep -q "events read"' ||
	fail "no STATUS= text"
# The test records, the marker and what the timer client's event added.
status_counts_records() {
	_n=$(systemctl show -p StatusText --value ringtapd |
		sed -n 's/^1 subscriber(s), .* \([0-9]*\) events read; lost: 0 in the kernel .*/\1/p')
	[ "${_n:-0}" -ge 2001 ]
}
wait_for 15 status_counts_records || fail "STATUS= text: $(systemctl show -p StatusText --value ringtapd)"
systemctl status ringtapd.service --no-pager -l > /tmp/status 2>&1 || true
grep -q 'Active: active (running)' /tmp/status || fail "status: $(cat /tmp/status)"
grep -q 'Status: "1 subscriber(s)' /tmp/status || fail "status: $(cat /tmp/status)"
pass "systemctl status: $(grep 'Status:' /tmp/status | sed 's/^ *//')"

# --- the Prometheus exporter: its socket unit, a scrape answered as a member of ringtap ---
# bash's /dev/tcp is the HTTP client: the guest has no curl.
scrape() {
	bash -c 'exec 5<>/dev/tcp/127.0.0.1/9813 &&
		printf "GET /metrics HTTP/1.0\r\nAccept: application/openmetrics-text;version=1.0.0\r\n\r\n" >&5 &&
		timeout 20 cat <&5' > /tmp/m.out 2>&1 && grep -q '^# EOF' /tmp/m.out
}
systemctl start ringtap-exporter.socket || fail "ringtap-exporter.socket did not start"
wait_for 30 scrape ||
	fail "exporter: $(cat /tmp/m.out; journalctl -u 'ringtap-exporter@*' -o cat --no-pager | tail -n 5)"
head -n 1 /tmp/m.out | grep -q '^HTTP/1.0 200 OK' || fail "exporter: $(head -n 5 /tmp/m.out)"
grep -q '^Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8' /tmp/m.out ||
	fail "exporter's Content-Type: $(grep Content-Type /tmp/m.out)"
read_total=$(awk '$1 ~ /^ringtap_cpu_events_read_total/ { n += $2 } END { print n + 0 }' /tmp/m.out)
[ "$read_total" -ge 2001 ] || fail "exporter: $read_total events read, want 2001 or more"
grep -q '^ringtap_subscribers 1$' /tmp/m.out || fail "exporter: $(grep '^ringtap_subscribers ' /tmp/m.out)"
pass "exporter: a scrape of 127.0.0.1:9813 answered, $read_total events read, 1 subscriber"

# --- journal --------------------------------------------------------------------
case $variant in
stock) want="trace_entry: 8 bytes, common fields common_type,common_flags,common_preempt_count,common_pid;" ;;
padded) want="trace_entry: 12 bytes, common fields common_type,common_flags,common_preempt_count,common_pid,common_padding;" ;;
rt) want="trace_entry: 12 bytes, common fields common_type,common_flags,common_preempt_count,common_pid,common_migrate_disable,common_preempt_lazy_count;" ;;
esac
# The start line has priority notice; a subscription's line (info) does not pass -p notice.
journal -p notice | grep -qF "$want" || fail "journal lacks '$want': $(journal)"
journal -p notice | grep -q subscribed && fail "an info line passed -p notice"
pass "journal start line: $(journal -p notice | grep trace_entry)"

# --- reload -----------------------------------------------------------------------
mkdir -p /etc/ringtap
printf 'max_clients = 5\nmax_queue_kb = 2048\n' > /etc/ringtap/ringtapd.conf
systemctl reload ringtapd.service || fail "reload failed"
wait_for 10 sh -c 'journalctl -u ringtapd -o cat | grep -q "reloaded /etc/ringtap/ringtapd.conf"' ||
	fail "no reload line: $(journal)"
journal | grep -q "reload: max_clients '64' -> '5'" || fail "max_clients not reloaded: $(journal)"
expect_eq "main pid after reload" "$(unit_pid)" $pid
kill -0 $client || fail "the client died on reload"

# --- SIGKILL: systemd restarts it; the client resumes where it was -----------------
# The instance, its trace fds, the page ring and the resume secret were in
# systemd's fd store from the start: the next ringtapd adopts them, and the
# stream resumes by its token. A burst (1,000 events on each CPU) fired
# while no ringtapd runs must reach it, none twice: nothing of the crash
# shows but a line.
kill -KILL $pid
echo 1000 > $RINGTAP_TEST/burst
wait_for 30 sh -c '[ "$(systemctl show -p NRestarts --value ringtapd)" = 1 ] &&
	[ "$(systemctl is-active ringtapd)" = active ]' ||
	fail "not restarted: $(systemctl status ringtapd --no-pager -l)"
newpid=$(unit_pid)
[ "$newpid" != "$pid" ] || fail "same pid after SIGKILL"
wait_for 30 grep -q '^# resumed' /tmp/a.out || fail "no resumption: $(cat /tmp/a.err)"
journal | grep -q "resumed after a crash: the instance's buffers as they were" ||
	fail "the killed daemon's instance was not adopted: $(journal)"
grep -q '^# gap' /tmp/a.out && fail "a gap after the crash: $(grep '^# gap' /tmp/a.out)"
pass "restarted as pid $newpid after SIGKILL of $pid; $(grep '^# resumed' /tmp/a.out)"
# The killed daemon said no Bye: the stream says its end was cut.
grep -q '^# end: the connection was cut' /tmp/a.out || fail "the cut stream was not marked"
wait_for 30 sh -c '[ $(grep -c ringtap_test:ringtap_test /tmp/a.out) -ge 4000 ]' ||
	fail "records fired while no ringtapd ran: $(records) of 4000"
echo 1000 > $RINGTAP_TEST/burst
wait_for 30 sh -c '[ $(grep -c ringtap_test:ringtap_test /tmp/a.out) -ge 6000 ]' ||
	fail "records after the restart: $(records) of 6000"
expect_eq "records in all" "$(records)" 6000
expect_eq "distinct (cpu, seq)" \
	"$(sed -n 's/.* seq=\([0-9]*\) cpu=\([0-9]*\) .*/\2:\1/p' /tmp/a.out | sort -u | wc -l)" 6000
expect_eq "lost lines" "$(grep -c '^# cpu [0-9]*: lost' /tmp/a.out)" 0
pass "6,000 records, none twice, none lost across SIGKILL (2,000 of them fired with no ringtapd)"

# --- a reloaded wake_percent reaches the kernel while records flow -----------------
# buffer_percent is wake_percent while the daemon drains and 0 while it is
# idle; records every millisecond keep it from ever going idle, so the new
# value must be written at the reload itself, not at the next wake-up.
bp=$T/instances/ringtap/buffer_percent
echo 1000 > $RINGTAP_TEST/rate
wait_for 10 sh -c "[ \$(cat $bp) = 50 ]" || fail "buffer_percent while busy: $(cat $bp)"
printf 'max_clients = 5\nmax_queue_kb = 2048\nwake_percent = 10\n' > /etc/ringtap/ringtapd.conf
systemctl reload ringtapd.service || fail "reload failed"
want="reload: wake_percent '50' -> '10'"
wait_for 10 sh -c "journalctl _PID=$newpid -o cat | grep -qF \"$want\"" ||
	fail "no wake_percent reload line: $(journal | tail -n 5)"
wait_for 5 sh -c "[ \$(cat $bp) = 10 ]" || fail "buffer_percent after the reload: $(cat $bp)"
for _ in 1 2 3 4 5; do
	[ "$(cat $bp)" = 10 ] || fail "buffer_percent went to $(cat $bp) while records flowed"
	sleep 0.2
done
echo 0 > $RINGTAP_TEST/rate
pass "buffer_percent 50 -> 10 at the reload while records flowed"

# --- stop ---------------------------------------------------------------------------
systemctl stop ringtapd.socket ringtapd.service
expect_eq "service after stop" "$(systemctl is-active ringtapd.service)" inactive
[ ! -e $T/instances/ringtap ] || fail "the tracefs instance is still there after stop"
pass "stop removed the tracefs instance"
kill -INT $client 2>/dev/null
wait_or_dump $client 10 || true
journal | grep -q "cpu0: .* records" || fail "no final report in the journal"
journal | grep -i -E 'watchdog|assert|sanitizer' && fail "unexpected journal lines"
pass "journal: $(journal | grep -c .) lines, last: $(journal | tail -n1)"
