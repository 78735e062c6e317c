# Guest with systemd as PID 1 and the project's .deb files (run-vm -d), not
# the project: what an administrator does with the packages. apt installs
# them offline (the root file system holds their dependencies); nothing
# is enabled or started by the installation; `systemctl enable --now
# ringtapd.socket` and a `ringtap stream` get every record of a burst; an
# upgrade in place restarts ringtapd and the stream goes on, missing nothing;
# then `apt-get purge` with the daemon running must leave nothing behind: no
# path the packages brought (dpkg -L, taken while installed), no other new
# path anywhere on the root file system, no ringtap group, no tracefs
# instance, no unit, no socket. Then once more with a daemon that was
# killed and not restarted (its tracefs instance left behind) before the
# purge.
debs=/var/cache/ringtap-test/debs
pkgs="ringtapd ringtap libringtap0"
export DEBIAN_FRONTEND=noninteractive
W=/tmp/package-test
mkdir -p $W
# Every path of the root file system but what dpkg, apt and the journal keep
# of their own history (their logs and databases record the purge itself)
# and the test's own files.
snapshot() {
	find / -xdev 2>/dev/null | grep -v -E \
		"^(/var/lib/dpkg|/var/lib/apt|/var/cache/apt|/var/cache/debconf|/var/log|$W)(/|\$)" | sort
}
up() { echo "note: $1 at $(cut -d' ' -f1 /proc/uptime) s"; }
up "snapshot"
snapshot > $W/before
up "install"

# --- install ----------------------------------------------------------------------
install_packages() {
	files=
	for p in $pkgs; do
		set -- $debs/${p}_*.deb
		[ -f "$1" ] || fail "no $p package in $debs: $(ls $debs)"
		files="$files $1"
	done
	apt-get install -y $files > $W/apt-install.log 2>&1 ||
		fail "apt-get install: $(tail -n 20 $W/apt-install.log)"
	up "installed"
	for p in $pkgs; do
		expect_eq "$p installed" "$(dpkg-query -W -f='${db:Status-Abbrev}' $p)" "ii "
	done
	# As the snapshot names them: /lib, /bin and /sbin are links into /usr on
	# this merged-/usr system (one sed, not a readlink per path: forks are slow
	# under TCG).
	[ -L /lib ] && [ -L /bin ] && [ -L /sbin ] || fail "not a merged-/usr root file system"
	dpkg -L $pkgs | grep -v -x -F '/.' | sed -E 's#^/(bin|sbin|lib|lib32|lib64|libx32)(/|$)#/usr/\1\2#' |
		sort -u > $W/pkg-files
	pass "installed: $(wc -l < $W/pkg-files) paths"
	up "listed"
	getent group ringtap > /dev/null || fail "the installation did not make the ringtap group"
	pass "ringtap group made at installation"
	# Nothing traces until the administrator says so.
	expect_eq "socket enabled after installation" "$(systemctl is-enabled ringtapd.socket)" disabled
	expect_eq "socket after installation" "$(systemctl is-active ringtapd.socket)" inactive
	expect_eq "service after installation" "$(systemctl is-active ringtapd.service)" inactive
	[ ! -e $T/instances/ringtap ] || fail "a tracefs instance before anything was enabled"
}

# --- purge ------------------------------------------------------------------------------
# purge_and_check WHEN
purge_and_check() {
	up "purge $1"
	apt-get purge -y $pkgs > $W/apt-purge.log 2>&1 || fail "apt-get purge: $(tail -n 20 $W/apt-purge.log)"
	for p in $pkgs; do
		expect_eq "$p after purge" "$(dpkg-query -W -f='${db:Status-Abbrev}' $p 2>/dev/null)" ""
	done
	# Every path the packages brought and the system did not have before.
	left=$(comm -13 $W/before $W/pkg-files | while read -r f; do
		if [ -e "$f" ] || [ -L "$f" ]; then echo "$f"; fi
	done)
	[ -z "$left" ] || fail "left by the purge: $(echo $left)"
	pass "each of the packages' paths is gone"
	up "snapshot"
	# Any other path made since (enable links, deb-systemd-helper's state, /etc/ringtap).
	snapshot > $W/after
	new=$(comm -13 $W/before $W/after)
	[ -z "$new" ] || fail "new paths after the purge: $(echo $new)"
	pass "the root file system holds the paths it held before the installation"
	getent group ringtap && fail "the ringtap group is still there after the purge"
	grep -q '^ringtap:' /etc/gshadow && fail "ringtap is still in /etc/gshadow"
	pass "no ringtap group"
	[ -z "$(ls -A $T/instances)" ] || fail "tracefs instances after the purge: $(ls $T/instances)"
	pass "no tracefs instance"
	for u in ringtapd.socket ringtapd.service; do
		expect_eq "$u after the purge" "$(systemctl show -p LoadState --value $u)" not-found
		expect_eq "$u state" "$(systemctl show -p ActiveState --value $u)" inactive
	done
	[ ! -e /run/ringtap ] || fail "/run/ringtap after the purge: $(ls -la /run/ringtap)"
	pass "no /run/ringtap"
	ldconfig -p | grep -q libringtap && fail "libringtap in the loader's cache: $(ldconfig -p | grep libringtap)"
	pass "libringtap not in the loader's cache"
}

install_packages
up "enable"
# --- enable, stream --------------------------------------------------------------
systemctl enable --now ringtapd.socket > $W/enable.log 2>&1 ||
	fail "systemctl enable --now ringtapd.socket: $(cat $W/enable.log)"
expect_eq "socket after enable --now" "$(systemctl is-active ringtapd.socket)" active
expect_eq "socket mode and group" "$(stat -c '%a %G' /run/ringtap/ringtapd.sock)" "660 ringtap"
ringtap stream -e ringtap_test:ringtap_test --no-time > $W/s.out 2> $W/s.err &
client=$!
wait_for 30 sh -c 'journalctl -u ringtapd -o cat | grep -q subscribed' ||
	fail "no subscription: $(systemctl status ringtapd --no-pager -l; journal | tail -n 20; cat $W/s.err)"
[ -d $T/instances/ringtap ] || fail "no tracefs instance while ringtapd runs"
want=$((500 * $(nproc)))
echo 500 > $RINGTAP_TEST/burst
records() { grep -c '^\[[0-9]*\] ringtap_test:ringtap_test ' $W/s.out; }
wait_for 30 sh -c "[ \$(grep -c ringtap_test:ringtap_test $W/s.out) -ge $want ]" ||
	fail "records: $(records) of $want; $(cat $W/s.err)"
# An upgrade in place (the same packages again): dpkg replaces the files and
# the maintainer scripts restart the units; the stream stays connected and
# misses nothing of a burst after it.
old=$(systemctl show -p MainPID --value ringtapd.service)
apt-get install -y --reinstall $files > $W/apt-reinstall.log 2>&1 ||
	fail "apt-get install --reinstall: $(tail -n 20 $W/apt-reinstall.log)"
up "reinstalled"
new=$(systemctl show -p MainPID --value ringtapd.service)
[ "$new" != "$old" ] && [ "$new" != 0 ] ||
	fail "the reinstallation did not restart ringtapd ($old -> $new): $(tail -n 20 $W/apt-reinstall.log)"
journalctl _PID="$old" -o cat | grep -q "kept in systemd's fd store" ||
	fail "the restart kept nothing: $(journalctl _PID="$old" -o cat | tail -n 5)"
wait_for 30 sh -c "journalctl _PID=$new -o cat | grep -q 'resumed after a restart'" ||
	fail "pid $new resumed nothing: $(journal | tail -n 20)"
kill -0 $client 2> /dev/null || fail "the stream ended at the upgrade: $(cat $W/s.err)"
echo 500 > $RINGTAP_TEST/burst
want=$((2 * want))
wait_for 30 sh -c "[ \$(grep -c ringtap_test:ringtap_test $W/s.out) -ge $want ]" ||
	fail "records after the upgrade: $(records) of $want; $(cat $W/s.err)"
pass "an upgrade in place restarted ringtapd and the stream went on"
kill -INT $client
wait_or_dump $client 10 || fail "ringtap stream exited $?: $(cat $W/s.err)"
expect_eq "records streamed" "$(records)" $want
expect_eq "distinct (cpu, seq)" \
	"$(sed -n 's/.* seq=\([0-9]*\) cpu=\([0-9]*\) .*/\2:\1/p' $W/s.out | sort -u | wc -l)" $want
grep -q '^# cpu [0-9]*: lost' $W/s.out && fail "losses: $(grep '^# cpu' $W/s.out)"
pass "no loss reported"
expect_eq "service after the stream" "$(systemctl is-active ringtapd.service)" active

purge_and_check "with the daemon running"

# --- a daemon killed and not restarted: its instance is left for the purge ------------
install_packages
systemctl enable --now ringtapd.socket > $W/enable.log 2>&1 ||
	fail "systemctl enable --now ringtapd.socket: $(cat $W/enable.log)"
systemctl start ringtapd.service || fail "ringtapd.service did not start: $(journal | tail -n 20)"
# What an OOM kill or a crash past the restart limit leaves.
mkdir -p /run/systemd/system/ringtapd.service.d
printf '[Service]\nRestart=no\n' > /run/systemd/system/ringtapd.service.d/no-restart.conf
systemctl daemon-reload
systemctl kill -s KILL ringtapd.service
wait_for 10 sh -c '! systemctl -q is-active ringtapd.service' || fail "ringtapd survived SIGKILL"
rm -r /run/systemd/system/ringtapd.service.d
systemctl daemon-reload
[ -d $T/instances/ringtap ] || fail "the killed daemon left no instance: the case is not tested"
pass "killed ringtapd left its instance, $(systemctl is-active ringtapd.service)"
purge_and_check "after the daemon was killed"
up "end"
