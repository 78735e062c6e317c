# Guest benchmark: one subscriber whose filter keeps 1 % of a burst of the
# test source (CPU 0's next n/50 sequence numbers of 2n events), with the
# filter in the kernel too (kernel_selection = 1) and in ringtapd only (0),
# in this one boot: events the kernel wrote into the ring buffer, pages
# ringtapd read, and ringtapd's CPU (utime + stime) over the burst.
n=${BENCH_EVENTS_PER_CPU:-100000}
sock=/run/ringtap/ringtapd.sock
inst=$T/instances/ringtap
# Written = still there + read + overwritten.
written() { awk '/^entries:/ { e += $2 } /^read events:/ { e += $3 } /^overrun:/ { e += $2 }
	END { print e + 0 }' $inst/per_cpu/cpu*/stats; }
emitted() { sed -n "s/^$1 //p" $RINGTAP_TEST/emitted; }
ticks() { awk '{ print $14 + $15 }' /proc/$1/stat; }
for ks in 1 0; do
	ringtapd -s $sock -b 4096 --kernel-selection=$ks 2> /tmp/d.err &
	d=$!
	wait_lines /tmp/d.err "listening on"
	s0=$(emitted cpu0)
	filter="cpu == 0 && seq < $((s0 + n / 50))"
	ringtap stream --transport=socket -s $sock -e ringtap_test:ringtap_test --filter "$filter" \
		--no-time > /tmp/f.out 2> /tmp/f.err &
	c=$!
	wait_lines /tmp/d.err subscribed
	sleep 1
	total0=$(emitted total) before=$(written) t0=$(ticks $d)
	echo $n > $RINGTAP_TEST/burst
	while [ $(( $(emitted total) - total0 )) -lt $((2 * n)) ]; do sleep 0.2; done
	# Drained within max_latency_ms; a second is plenty.
	sleep 1
	after=$(written) t1=$(ticks $d)
	kill -INT $c
	wait_or_dump $c 30 || true
	kill -INT $d
	wait_or_dump $d 60 || fail "ringtapd: $(tail -n 5 /tmp/d.err)"
	kept=$(grep -c ringtap_test: /tmp/f.out)
	pages=$(sed -n 's/.*cpu[0-9]*: \([0-9]*\) pages.*/\1/p' /tmp/d.err | awk '{ n += $1 } END { print n + 0 }')
	expect_eq "records kept by the filter (kernel_selection $ks)" $kept $((n / 50))
	echo "KF kernel_selection=$ks emitted $((2 * n)) kept $kept written $((after - before)) pages $pages ticks $((t1 - t0))"
done
