# Guest: the kernel's filter language in user space gives the kernel's own
# records. Each filter below is written into its own tracefs instance, where
# the kernel filters, and given to a subscriber of a ringtapd that keeps
# selection in user space (--kernel-selection=0). One burst of the test
# source then feeds both; per filter, the (cpu, seq) of the kernel's records
# and of the subscriber's must be the same set.
sock=/run/ringtap/ringtapd.sock
burst=200

# One per line, read raw: backslashes and quotes reach both sides as written.
cat > /tmp/filters <<'EOF'
seq < 10
seq >= 0x60 && seq <= 0144
!(seq & 3)
seq == 7 || seq == 9 && cpu == 1
(seq == 7 || seq == 9) && CPU == 1
!seq > 5 && !(cpu == 0)
common_pid > -1 && seq < 5
common_pid < -2147483647 || seq == 1
cpu != 0 && seq > 195
tag == "rtaptest" && seq < 4
tag == 'rtap' || seq == 3
tag ~ "*test"
tag ~ "*tes" && seq < 3
msg ~ "cpu1*" && seq < 6
msg ~ "*seq 1?? x*"
msg ~ "*xxxxxxx"
msg ~ "*seq 19*"
msg ~ "!cpu0*" && seq < 2
msg ~ "cpu[!0] seq [1-3] *"
msg ~ "cpu0 seq 4\ *"
msg == "cpu0 seq 5 xxxxx"
msg != "cpu0 seq 5 xxxxx" && seq == 5
msg ~ "**" && seq == 0
EOF
nf=$(wc -l < /tmp/filters)

i=0
while IFS= read -r f; do
	i=$((i + 1))
	inst=$T/instances/f$i
	mkdir $inst || fail "instance f$i"
	echo 64 > $inst/buffer_size_kb
	printf "%s\n" "$f" > $inst/events/ringtap_test/ringtap_test/filter ||
		fail "the kernel refused filter $i '$f'"
	echo 1 > $inst/events/ringtap_test/ringtap_test/enable
done < /tmp/filters
pass "the kernel took $nf filters"

ringtapd -s $sock --kernel-selection=0 2> /tmp/d.err &
daemon=$!
wait_lines /tmp/d.err "listening on"
i=0
while IFS= read -r f; do
	i=$((i + 1))
	ringtap stream -s $sock -e ringtap_test:ringtap_test --filter "$f" --no-time \
		> /tmp/s$i.out 2> /tmp/s$i.err &
	echo $! > /tmp/s$i.pid
done < /tmp/filters
wait_lines /tmp/d.err subscribed $nf 60
expect_eq "ringtapd's own instance has no kernel filter" \
	"$(cat $T/instances/ringtap/events/ringtap_test/ringtap_test/filter)" none

echo $burst > $RINGTAP_TEST/burst
kill -INT $daemon
wait_or_dump $daemon 60 || fail "ringtapd: $(cat /tmp/d.err)"

pairs() { sed -n "s/$1 seq=\([0-9]*\) cpu=\([0-9]*\) .*/\2:\1/p" "$2" | sort; }
i=0
total=0
while IFS= read -r f; do
	i=$((i + 1))
	wait_or_dump "$(cat /tmp/s$i.pid)" 30 || fail "subscriber $i: $(cat /tmp/s$i.err)"
	grep -q '^#' /tmp/s$i.out && fail "subscriber $i reports a loss: $(grep '^#' /tmp/s$i.out)"
	grep -q LOST $T/instances/f$i/trace && fail "instance f$i lost events"
	pairs '.*ringtap_test:' $T/instances/f$i/trace > /tmp/k$i
	pairs '.*ringtap_test:ringtap_test pid=[0-9]*' /tmp/s$i.out > /tmp/u$i
	k=$(wc -l < /tmp/k$i)
	u=$(wc -l < /tmp/u$i)
	cmp -s /tmp/k$i /tmp/u$i ||
		fail "filter $i '$f': kernel $k records, ringtapd $u; differing: $(diff /tmp/k$i /tmp/u$i | grep '^[<>]' | head -5 | tr '\n' ' ')"
	pass "filter $i '$f': $k records, the same"
	total=$((total + k))
done < /tmp/filters

# The forms must select something, or nothing was compared.
expect_eq "records of 'seq < 10'" "$(wc -l < /tmp/k1)" 20
expect_eq "records of '!(seq & 3)'" "$(wc -l < /tmp/k3)" $((burst / 2))
expect_eq "records of 'tag ~ \"*test\"' (the kernel compares a char array's end without its last byte)" \
	"$(wc -l < /tmp/k12)" 0
[ "$total" -gt 400 ] || fail "only $total records selected in all"
pass "$total records compared"
