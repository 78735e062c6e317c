# shellcheck shell=bash
# Helpers for the integration scripts, sourced after `set -euo pipefail`.
# As tests/unit/check.h does, a script that ran no check fails: each check
# is counted (pass, check, checked), and the exit hook turns a success with none
# into a failure. Cleanup goes through on_exit, which keeps that hook.

checks=0 failed=0
_cleanup=:

# on_exit COMMANDS: what the exit runs before the check count is judged
# (replaces the previous one, as `trap COMMANDS EXIT` would).
on_exit() { _cleanup=$1; }

_checks_exit() {
	local rc=$?
	eval "$_cleanup" || true
	[ $rc = 77 ] && exit 77
	if [ $rc = 0 ] && [ "$failed" != 0 ]; then
		rc=1
	fi
	if [ $rc = 0 ] && [ "$checks" = 0 ]; then
		echo "FAIL: $(basename "$0") ran no check"
		rc=1
	fi
	exit $rc
}
trap _checks_exit EXIT

fail() { echo "FAIL: $*"; exit 1; }

# pass WHAT: a check the script made and passed.
pass() {
	checks=$((checks + 1))
	echo "ok: $*"
}

# checked WHAT OK: counts a check the script made itself; OK 0 passed it.
checked() {
	checks=$((checks + 1))
	if [ "$2" = 0 ]; then
		echo "ok: $1"
	else
		echo "FAIL: $1"
		failed=$((failed + 1))
	fi
}

# check WHAT GOT WANT: GOT must be WANT (a failure is counted, the script goes on).
check() {
	checks=$((checks + 1))
	if [ "$2" = "$3" ]; then
		echo "ok: $1 = $3"
	else
		echo "FAIL: $1: got '$2', want '$3'"
		failed=$((failed + 1))
	fi
}

# field NAME "a=1 NAME=2 ...": the value of one NAME=VALUE word.
field() { tr ' ' '\n' <<< "$2" | sed -n "s/^$1=//p"; }

# fixture_count TREE FIELD [CPU]: FIELD (entries, overrun) of the per_cpu/cpuN/stats
# files of a captured tree (only CPU's if given), summed: what the kernel held at capture.
fixture_count() {
	awk -v f="$2:" '$1 == f { n += $2 } END { print n + 0 }' "$1"/per_cpu/cpu${3:-*}/stats
}
