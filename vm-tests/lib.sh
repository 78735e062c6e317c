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
