# shellcheck shell=bash
# Shared settings of the vm-tests scripts: where the cache lives and how
# they talk. Sourced, never run.

RINGTAP_CACHE=${RINGTAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ringtap}
RINGTAP_VARIANTS=${RINGTAP_VARIANTS:-"stock padded rt"}
KERNEL_TARBALL=${KERNEL_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
VM_TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$VM_TESTS_DIR/.." && pwd)

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Seconds since the epoch with a fraction, for the timings we report.
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

kernel_image() { echo "$RINGTAP_CACHE/kernels/$1/bzImage"; }

# /dev/kvm exists here but a KVM guest can hang silently: trust KVM only
# after a short timed boot of the real kernel succeeded (once per host boot).
# usage: probe_kvm BZIMAGE; true when KVM can be used.
probe_kvm() {
	local kernel=$1 bootid stamp
	bootid=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo none)
	stamp=$RINGTAP_CACHE/kvm-probe.$bootid
	if [ ! -f "$stamp" ]; then
		local verdict=no
		if [ -w /dev/kvm ]; then
			local p t
			p=$(mktemp -d)
			printf '#!/bin/sh\necho RINGTAP-KVM-OK\nreboot -f\n' > "$p/init"
			chmod +x "$p/init"
			(cd "$p" && cp /bin/busybox . && mkdir bin && ln -s ../busybox bin/sh &&
				ln -s ../busybox bin/reboot && find . | cpio --quiet -o -H newc -R 0:0) > "$p.cpio"
			mv "$p.cpio" "$p/i.cpio"
			t=$(now)
			# Through sh: bash would report an aborting QEMU on the test's log.
			if sh -c '"$@" >/dev/null 2>&1' probe timeout 20 qemu-system-x86_64 -nodefaults -display none -no-reboot -smp 1 -m 256 \
				-accel kvm -cpu host -kernel "$kernel" -initrd "$p/i.cpio" \
				-append "console=ttyS0 panic=-1 rdinit=/init" -serial "file:$p/out" \
				2>/dev/null && grep -q RINGTAP-KVM-OK "$p/out"; then
				verdict=yes
			fi
			log "KVM probe: $verdict after $(elapsed "$t") s"
			rm -rf "$p"
		fi
		mkdir -p "$RINGTAP_CACHE"
		echo "$verdict" > "$stamp"
	fi
	[ "$(cat "$stamp")" = yes ]
}
