# shellcheck shell=sh
# Helpers for guest test scripts (busybox sh). Sourced before /test.sh.

T=/sys/kernel/tracing
RINGTAP_TEST=/sys/kernel/debug/ringtap_test

fail() { echo "FAIL: $*"; exit 1; }
# Every check passes through pass (expect_eq, daemon_accounted call it): as
# tests/unit/check.h does, a script that ran none fails at its exit.
RINGTAP_CHECKS=0
pass() {
	RINGTAP_CHECKS=$((RINGTAP_CHECKS + 1))
	echo "ok: $*"
}
checks_at_exit() {
	_rc=$?
	if [ $_rc = 0 ] && [ "$RINGTAP_CHECKS" = 0 ]; then
		echo "FAIL: the test ran no check"
		exit 1
	fi
	echo "checks run: $RINGTAP_CHECKS"
	exit $_rc
}
trap checks_at_exit EXIT

# expect_eq WHAT GOT WANT
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
	pass "$1 = $3"
}

# Sends a directory to the host over the second serial port, as a base64
# gzipped tar between markers (the host's run-vm unpacks it into
# OUT/export/). Compressed: a tree of formats is mostly tar's headers.
export_dir() {
	stty -F /dev/ttyS1 raw -echo 2>/dev/null
	{
		echo "RINGTAP-EXPORT-BEGIN"
		tar -C "$1" -cf - . | gzip -c | base64
		echo "RINGTAP-EXPORT-END"
	} > /dev/ttyS1
}

# wait_for SECONDS CMD...: until CMD succeeds (CMD may itself take a while under TCG).
wait_for() {
	_end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt $_end ] || return 1
		sleep 0.2
	done
}

# wait_or_dump PID SECONDS: waits for PID; if it is still running after
# SECONDS, shows where it is stuck (state, kernel stack) and fails.
wait_or_dump() {
	_i=0
	while kill -0 "$1" 2>/dev/null; do
		_i=$((_i + 1))
		if [ $_i -gt $(($2 * 10)) ]; then
			echo "stuck: pid $1 $(grep State /proc/$1/status) wchan=$(cat /proc/$1/wchan)"
			cat /proc/$1/stack 2>/dev/null
			for t in /proc/[0-9]*; do
				grep -q '^State:.*D' $t/status 2>/dev/null &&
					echo "D task $(cat $t/comm): $(cat $t/stack 2>/dev/null | head -5 | tr '\n' ' ')"
			done
			fail "pid $1 did not exit within $2 s"
		fi
		sleep 0.1
	done
	wait "$1"
}

# wait_lines FILE PATTERN [COUNT [SECONDS]]: waits (10 s by default) until
# FILE has COUNT (default 1) lines matching PATTERN, e.g. ringtapd's
# "listening on" or one "subscribed" per client; fails with FILE's text
# otherwise.
wait_lines() {
	_i=0
	# grep -c prints nothing for a file not there yet: that counts as 0.
	while _n=$(grep -c "$2" "$1" 2>/dev/null); [ "${_n:-0}" -lt "${3:-1}" ]; do
		_i=$((_i + 1))
		[ $_i -lt $((${4:-10} * 10)) ] || fail "waiting for ${3:-1} '$2' in $1: $(tail -n 20 "$1")"
		sleep 0.1
	done
}

# wait_tracer WHAT: waits (10 s at most) until a tracer such as trace-cmd
# record has switched the test event on. trace-cmd says nothing when it is
# ready (its stdout is a file here): it enables the event last, after
# clearing the buffer.
wait_tracer() {
	_i=0
	until [ "$(cat $T/events/ringtap_test/ringtap_test/enable)" = 1 ]; do
		_i=$((_i + 1))
		[ $_i -lt 100 ] || fail "$1 did not start"
		sleep 0.1
	done
}

# daemon_accounted LOG: from ringtapd's stop report in LOG (its stderr),
# every CPU's records equal the events the kernel handed over ("read"), and
# none stayed in the buffer ("unread"). A CPU with malformed pages is left
# out: their records were never counted. Fails when no report is there.
daemon_accounted() {
	awk '/cpu[0-9]+: [0-9]+ pages, [0-9]+ records,/ {
		for (i = 1; i < NF; i++) {
			if ($(i + 1) == "records,") rec = $i
			if ($(i + 1) == "malformed") bad = $i
			if ($i == "read") read = $(i + 1) + 0
			if ($i == "unread") unread = $(i + 1) + 0
		}
		n++
		if (bad == 0 && (read != rec || unread != 0)) {
			sub(/:$/, "", $2)
			printf "FAIL: %s: the kernel handed over %d, ringtapd read %d records, " \
				"%d left unread\n", $2, read, rec, unread
			wrong++
		}
	}
	END { if (!n) print "FAIL: no stop report"; exit !n || wrong }' "$1" ||
		fail "ringtapd's records against the kernel's counters: $(grep 'pages, .* records,' "$1")"
	pass "ringtapd read, as records, every event the kernel handed over and left none unread"
}

# expect_every_seq WHAT FILE: FILE, an rt-guest-seqcheck report, holds every
# sequence number the test source emitted on each CPU once and no comment
# (a loss, a gap, a cut); sets $seq_total to the events emitted.
expect_every_seq() {
	cat "$2"
	grep -q '^comment:' "$2" && fail "$1: the stream reported: $(grep '^comment:' "$2")"
	_report=$(tail -n 1 "$2")
	# Records missing: what the daemons said of catch-ups, resumes and recovered pages.
	if grep -q '^missing:' "$2" && command -v journalctl > /dev/null; then
		journalctl -o short-monotonic --no-pager |
			grep -E 'caught up|resumed|taken from|cannot|recover|crashed ringtapd|handed over' |
			tail -n 60 | sed 's/^/note: /'
		grep -h '^missing:' /tmp/*.check 2> /dev/null | sed 's/^/note: any subscriber /'
	fi
	expect_eq "$1: records seen twice" "$(echo "$_report" | sed -n 's/.* dups \([0-9]*\).*/\1/p')" 0
	seq_total=0
	for _c in $(seq 0 $(($(nproc) - 1))); do
		_n=$(sed -n "s/^cpu$_c //p" $RINGTAP_TEST/emitted)
		expect_eq "$1: cpu$_c: distinct sequence numbers and the highest + 1" \
			"$(echo "$_report" | sed -n "s/.* cpu$_c count \([0-9]*\) max \([0-9]*\).*/\1 \2/p")" \
			"$_n $_n"
		seq_total=$((seq_total + _n))
	done
}

# The systemd guests' ringtapd: its main pid and its journal.
unit_pid() { systemctl show -p MainPID --value ringtapd.service; }

# tls_listener: a CA, the daemon's certificate and a collector's (allowed every
# event) in /etc/ringtap, the unit opened by the shipped fleet
# drop-in; the caller's ringtapd.conf sets listen_tcp = 127.0.0.1:7010.
# $tls_client: a ringtap command's options to connect there. openssl is
# copied in (GUEST_PROGS): Debian's minbase lacks it.
tls_listener() {
	command -v openssl > /dev/null || fail "no openssl in the guest"
	mkdir -p /etc/ringtap/tls /etc/systemd/system/ringtapd.service.d
	printf '[req]\ndistinguished_name = dn\n[dn]\n[san]\nsubjectAltName = IP:127.0.0.1\n' \
		> /tmp/ossl.cnf
	( export OPENSSL_CONF=/tmp/ossl.cnf && cd /etc/ringtap/tls &&
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
			-subj /CN=fleet-ca -keyout ca.key -out ca.crt &&
		for name in server collector; do
			openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
				-subj /CN=$name -keyout $name.key -out $name.csr &&
			openssl x509 -req -in $name.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
				-days 2 -extfile /tmp/ossl.cnf -extensions san -out $name.crt ||
				exit 1
		done ) > /tmp/openssl.log 2>&1 || fail "certificates: $(cat /tmp/openssl.log)"
	chmod 644 /etc/ringtap/tls/*
	# Every event: RAW pages (ringtap record) carry them all.
	echo "collector *" > /etc/ringtap/clients
	install -m 644 /usr/share/ringtap/fleet.conf \
		/etc/systemd/system/ringtapd.service.d/fleet.conf
	systemctl daemon-reload
	tls_client="-s tls://127.0.0.1:7010 --ca /etc/ringtap/tls/ca.crt"
	tls_client="$tls_client --cert /etc/ringtap/tls/collector.crt"
	tls_client="$tls_client --key /etc/ringtap/tls/collector.key"
}
journal() { journalctl -u ringtapd.service -o cat --no-pager "$@"; }

# expect_handed_over I OLD: restart I replaced main pid OLD by a new one
# ($new), OLD kept the session in systemd's fd store and the new one resumed.
expect_handed_over() {
	new=$(unit_pid)
	[ "$new" != "$2" ] && [ "$new" != 0 ] || fail "restart $1: main pid $2 -> $new"
	journalctl _PID="$2" -o cat | grep -q "kept in systemd's fd store" ||
		fail "restart $1: pid $2 kept nothing: $(journalctl _PID="$2" -o cat | tail -n 5)"
	wait_for 30 sh -c "journalctl _PID=$new -o cat | grep -q 'resumed after a restart'" ||
		fail "restart $1: pid $new resumed nothing: $(journal | tail -n 20)"
}

# account_losses FILE: a `ringtap stream` text output, per CPU: the distinct
# sequence numbers it got, the losses reported to it, its first and last
# ("cpuN got G lost L first F last S"), then "dups D unreported U": records
# seen twice, and sequence numbers missing that no report before the next
# record covered.
account_losses() {
	awk '
		/^# cpu [0-9]*: lost / {
			cpu = $3; sub(/:$/, "", cpu); n = $5 == "least" ? $6 : $5
			if ($5 == "at") n = $7
			lost[cpu] += n; told[cpu] += n
			next
		}
		/^#/ { next }
		{
			s = ""; c = ""
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^seq=/) s = substr($i, 5) + 0
				if ($i ~ /^cpu=/) c = substr($i, 5) + 0
			}
			if (s == "" || c == "") next
			if ((c, s) in seen) dups++
			seen[c, s] = 1; got[c]++
			if (!(c in first)) first[c] = s
			else if (s > last[c] + 1 + told[c]) unreported += s - last[c] - 1 - told[c]
			last[c] = s; told[c] = 0
		}
		END {
			for (c in got)
				printf "cpu%s got %d lost %d first %d last %d\n", c, got[c], lost[c],
					first[c], last[c]
			printf "dups %d unreported %d\n", dups + 0, unreported + 0
		}' "$1"
}

# mark_emitted: what the test source has emitted on each CPU so far;
# emitted_since CPU: how many it emitted there since the mark.
mark_emitted() { cp $RINGTAP_TEST/emitted /tmp/emitted.mark; }
emitted_since() {
	_now=$(sed -n "s/^cpu$1 //p" $RINGTAP_TEST/emitted)
	_then=$(sed -n "s/^cpu$1 //p" /tmp/emitted.mark)
	echo $((${_now:-0} - ${_then:-0}))
}
