# Guest half of the fleet test (vm-tests/fleet): one host of the fleet.
# Set before it: FLEET_NAME, FLEET_RATE, FLEET_SECONDS, NATS_PORT, and the
# certificates in /etc/ringtap/tls. The daemon listens on TCP with TLS and
# publishes to NATS on the host (10.0.2.2 on QEMU's user network); the test
# source runs FLEET_SECONDS at FLEET_RATE once the collector has subscribed.
# The host reads "RINGTAP-FLEET: NAME emitted N" off the console.
hostname "$FLEET_NAME"
ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2
# RAW pages (what collect records) need a certificate allowed every event.
echo "collector *" > /etc/ringtap/clients
emitted_total() { sed -n 's/^total //p' $RINGTAP_TEST/emitted; }

ringtapd -s /run/ringtapd.sock -e 'ringtap_test:*' --listen-tcp 0.0.0.0:7411 \
	--tls-cert /etc/ringtap/tls/daemon.crt --tls-key /etc/ringtap/tls/daemon.key \
	--tls-ca /etc/ringtap/tls/fleet-ca.crt --tls-clients /etc/ringtap/clients \
	--nats-url "nats://10.0.2.2:$NATS_PORT" --nats-events 'ringtap_test:*' 2> /tmp/d.err &
daemon=$!
wait_lines /tmp/d.err "listening on TCP"
# The collector on the host connects once every guest is up: two minutes at
# most. After a reboot its old recorder connects first, sees another boot and
# leaves; its successor is the one to wait for: a collector connection that
# stays 2 s. Counted by connection (its address): one refused (the old
# recorder's resume, its token stale after the reboot) never subscribed.
open_collectors() {
	awk '/via collector@/ {
		match($0, /collector@[^ ]*/)
		c = substr($0, RSTART, RLENGTH)
		if (/\) subscribed: /) open[c] = 1
		else if (/\): /) delete open[c]
	} END { n = 0; for (c in open) n++; print n }' /tmp/d.err
}
_i=0 _stable=0
while [ $_stable -lt 20 ]; do
	if [ "$(open_collectors)" -ge 1 ]; then _stable=$((_stable + 1)); else _stable=0; fi
	_i=$((_i + 1))
	[ $_i -lt 1200 ] || fail "no collector stayed subscribed: $(tail -n 5 /tmp/d.err)"
	sleep 0.1
done
pass "$FLEET_NAME: the collector subscribed over TLS"
before=$(emitted_total)
echo "$FLEET_RATE" > $RINGTAP_TEST/rate
sleep "$FLEET_SECONDS"
echo 0 > $RINGTAP_TEST/rate
sleep 1
n=$(( $(emitted_total) - before ))
echo "RINGTAP-FLEET: $FLEET_NAME emitted $n"
# Time for the last pages to reach the collector and NATS before the stop.
sleep 3
kill -INT $daemon
wait_or_dump $daemon 60 || fail "ringtapd exit status $?: $(tail -n 20 /tmp/d.err)"
grep "NATS\|client" /tmp/d.err | tail -n 4
pass "$FLEET_NAME: ringtapd stopped cleanly after $n events"
