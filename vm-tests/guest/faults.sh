# Guest: privileges dropped after setup, and faults under a streaming subscriber. CPU 1 goes offline and comes
# back: the subscriber is told both, the other CPU's stream goes on, and
# every event emitted reaches the subscriber (the sequence numbers prove it). The tracefs instance cannot be
# removed from under the daemon while it reads it (the kernel says EBUSY),
# and the daemon goes on.
sock=/run/ringtap/ringtapd.sock
emitted() { sed -n 's/^total //p' $RINGTAP_TEST/emitted; }
records() { grep -c 'ringtap_test:ringtap_test' /tmp/a.out; }

ringtapd -s $sock 2> /tmp/d.err &
daemon=$!
wait_lines /tmp/d.err "listening on"
# Started by root outside systemd, it keeps CAP_SYSLOG only once set up.
wait_lines /tmp/d.err "tracing .* event"
expect_eq "capabilities after setup" "$(sed -n 's/^CapEff:\t//p' /proc/$daemon/status)" 0000000400000000
expect_eq "bounding set after setup" "$(sed -n 's/^CapBnd:\t//p' /proc/$daemon/status)" 0000000400000000
expect_eq "no_new_privs after setup" "$(sed -n 's/^NoNewPrivs:\t//p' /proc/$daemon/status)" 1
ringtap stream -s $sock -e ringtap_test:ringtap_test --no-time > /tmp/a.out 2> /tmp/a.err &
a=$!
wait_lines /tmp/d.err subscribed
start=$(emitted)

echo 500 > $RINGTAP_TEST/burst
sleep 1
echo 0 > /sys/devices/system/cpu/cpu1/online || fail "cannot take cpu1 offline"
expect_eq "online CPUs" "$(cat /sys/devices/system/cpu/online)" 0
echo 500 > $RINGTAP_TEST/burst
sleep 1
kill -0 $daemon || fail "ringtapd died with cpu1 offline: $(cat /tmp/d.err)"
wait_lines /tmp/a.out '^# cpu 1 offline'
pass "subscriber told: $(grep '^# cpu 1 offline' /tmp/a.out)"
echo 1 > /sys/devices/system/cpu/cpu1/online || fail "cannot bring cpu1 back"
wait_lines /tmp/a.out '^# cpu 1 online'
pass "subscriber told: $(grep '^# cpu 1 online' /tmp/a.out)"
echo 500 > $RINGTAP_TEST/burst
sleep 1

# Removing the instance: refused while its files are open.
if rmdir $T/instances/ringtap 2> /tmp/rmdir.err; then
	fail "the instance was removed from under the daemon"
fi
pass "instance removal refused: $(cat /tmp/rmdir.err)"
echo 500 > $RINGTAP_TEST/burst
sleep 1
kill -0 $daemon || fail "ringtapd died: $(cat /tmp/d.err)"

n=$(( $(emitted) - start ))
kill -INT $daemon
wait_or_dump $daemon 30 || fail "ringtapd exit status $?: $(cat /tmp/d.err)"
wait_or_dump $a 30
cat /tmp/d.err
echo "note: emitted $n: cpu0 $(grep -c ' cpu=0 ' /tmp/a.out), cpu1 $(grep -c ' cpu=1 ' /tmp/a.out)"
expect_eq "records" "$(records)" $n
expect_eq "distinct (cpu, seq)" \
	"$(sed -n 's/.* seq=\([0-9]*\) cpu=\([0-9]*\) .*/\2:\1/p' /tmp/a.out | sort -u | wc -l)" $n
expect_eq "lost lines" "$(grep -c '^#.*lost' /tmp/a.out)" 0
