# Guest with systemd as PID 1: NATS JetStream publishing across `systemctl
# restart ringtapd` and across SIGKILL. ringtapd publishes the test source
# at a steady rate to a JetStream server in the guest (nats-server on its
# loopback, the unit opened by the shipped fleet drop-in); each restart
# waits for JetStream's acknowledgments before the next daemon takes the
# instance on and publishes from where the last one stopped reading, under
# a session of its own. A crash waits for nothing: the next daemon reads
# the dead one's mark (FDNAME=nats) and publishes the ring's pages from it
# again under the dead one's session and numbers, so JetStream keeps each
# message once by its id. After the restarts and crashes a stop, then
# `ringtap collect --nats` reads the stream: every sequence number the
# kernel emitted on each CPU is there exactly once (rt-guest-seqcheck),
# nothing reported lost, missing or stored twice.
restarts=${RESTARTS:-5}
crashes=${CRASHES:-3}
rate=${RATE:-5000}
ncpus=$(nproc)

emitted() { sed -n "s/^$1 //p" $RINGTAP_TEST/emitted; }

command -v nats-server > /dev/null || fail "no nats-server in the guest"
expect_eq "events emitted before the test" "$(emitted total)" 0
mkdir -p /tmp/js
nats-server -a 127.0.0.1 -p 4222 -js -sd /tmp/js > /tmp/nats.log 2>&1 &
server=$!
wait_for 30 bash -c 'exec 3<> /dev/tcp/127.0.0.1/4222' ||
	fail "nats-server did not listen: $(cat /tmp/nats.log)"
mkdir -p /etc/ringtap /etc/systemd/system/ringtapd.service.d
install -m 644 /usr/share/ringtap/fleet.conf /etc/systemd/system/ringtapd.service.d/fleet.conf
cat > /etc/ringtap/ringtapd.conf << 'CONF'
buffer_kb = 8192
nats_url = nats://127.0.0.1:4222
nats_events = ringtap_test:ringtap_test
CONF
systemctl daemon-reload
systemctl start ringtapd.socket ringtapd.service || fail "ringtapd did not start: $(journal | tail -n 20)"
echo "$rate" > $RINGTAP_TEST/rate
sleep 2

for i in $(seq "$restarts"); do
	old=$(unit_pid)
	echo "note: restart $i at $(cut -d' ' -f1 /proc/uptime) s"
	systemctl restart ringtapd.service || fail "restart $i: $(journal | tail -n 20)"
	expect_handed_over "$i" "$old"
	sleep 1
done
pass "$restarts restarts at $rate events/s with NATS publishing on"

republished=0
for i in $(seq "$crashes"); do
	old=$(unit_pid)
	echo "note: crash $i at $(cut -d' ' -f1 /proc/uptime) s"
	kill -KILL "$old"
	wait_for 60 sh -c "[ \"\$(systemctl show -p NRestarts --value ringtapd)\" = $i ] &&
		[ \"\$(systemctl is-active ringtapd)\" = active ]" ||
		fail "crash $i: not restarted: $(systemctl status ringtapd --no-pager -l | tail -n 20)"
	new=$(unit_pid)
	wait_for 30 sh -c "journalctl _PID=$new -o cat | grep -q 'NATS: resumed after a crash'" ||
		fail "crash $i: publishing did not go on from the mark: $(journalctl _PID="$new" -o cat)"
	line=$(journalctl _PID="$new" -o cat | grep 'NATS: resumed after a crash')
	echo "note: crash $i: $line"
	republished=$((republished + $(echo "$line" | sed -n 's/.*numbers: \([0-9]*\) page.*/\1/p')))
	sleep 2
done
pass "$crashes crashes: each next ringtapd published $republished page(s) again from the mark"

echo 0 > $RINGTAP_TEST/rate
sleep 3
last=$(unit_pid)
systemctl stop ringtapd.service
journalctl _PID="$last" -o cat | grep -i "nats" | sed 's/^/note: /'
timeout 600 ringtap collect --nats nats://127.0.0.1:4222 -o /tmp/col --drain --text-only \
	2> /tmp/collect.err || fail "collect: $(cat /tmp/collect.err)"
cat /tmp/collect.err
[ "$(ls /tmp/col/*.txt | wc -l)" = 1 ] || fail "collect wrote $(ls /tmp/col)"
cat /tmp/col/*.txt | rt-guest-seqcheck "$ncpus" > /tmp/check
expect_every_seq "the stream" /tmp/check
total=$seq_total
summary=$(grep "^ringtap collect: [^ ]*: [0-9]* records" /tmp/collect.err)
expect_eq "collect's count" "$(echo "$summary" | sed -n 's/.*: \([0-9]*\) records,.*/\1/p')" "$total"
echo "$summary" | grep -q ", lost 0 (0 kernel, 0 publish), 0 missing unreported$" ||
	fail "collect: $summary"
pass "JetStream holds every one of $total events once across $restarts restarts and $crashes crashes"
kill "$server"
journal -p warning | grep -v -i -E "lost\b|status=9/KILL|result 'signal'" |
	grep -i -E 'warn|error|fail' && fail "journal warnings"
pass "journal: $(journal | grep -c .) lines"
