#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 120) on stable Rust: RUSTC_BOOTSTRAP lets cargo-fuzz
# pass its -Z flags, and without a sanitizer runtime (`--sanitizer none`) only Rust's own checks
# (panics, overflow checks, debug assertions) and libFuzzer's limits (time per input, RSS) catch bugs.
# Findings land in fuzz/artifacts/<target>/. Seed first with fuzz/seed_corpus.sh.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds=${1:-120}
shift || true
targets=${*:-sniff gzip xplane hlo pprof memory_profile memory_viewer device_memory engine}
mkdir -p fuzz/logs
status=0
for t in $targets; do
  echo "== $t (${seconds}s; full log in fuzz/logs/$t.log)"
  RUSTC_BOOTSTRAP=1 cargo fuzz run --sanitizer none -a "$t" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=3072 -malloc_limit_mb=2048 -print_final_stats=1 \
    > "fuzz/logs/$t.log" 2>&1
  rc=$?
  grep -E "^(Done|stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+== ERROR|SUMMARY|thread .* panicked|artifact_prefix)" "fuzz/logs/$t.log"
  if [[ $rc -ne 0 ]]; then echo "!! $t failed (exit $rc)"; status=1; fi
done
exit $status
