# shellcheck shell=sh
# Helpers for guest test scripts (busybox sh). Sourced before /test.sh.

T=/sys/kernel/tracing
RINGTAP_TEST=/sys/kernel/debug/ringtap_test

fail() { echo "FAIL: $*"; exit 1; }
pass() { echo "ok: $*"; }

# expect_eq WHAT GOT WANT
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
	pass "$1 = $3"
}

# Sends a directory to the host over the second serial port, as a base64
# tar between markers (the host's run-vm unpacks it into OUT/export/).
export_dir() {
	stty -F /dev/ttyS1 raw -echo 2>/dev/null
	{
		echo "RINGTAP-EXPORT-BEGIN"
		tar -C "$1" -cf - . | base64
		echo "RINGTAP-EXPORT-END"
	} > /dev/ttyS1
}
