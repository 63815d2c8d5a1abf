#!/usr/bin/env bash
# Copies the test fixtures into each fuzz target's corpus (fuzz/corpus/<target>/, not committed):
# inflated where the target reads raw protobuf, as stored where it reads what users drop.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
fx=../tests/fixtures
put() { # target file [inflate]
  mkdir -p "corpus/$1"
  local out="corpus/$1/$(basename "$2" .gz)"
  if [[ "${3:-}" == inflate ]] && gzip -t "$2" 2>/dev/null; then gzip -dc "$2" > "$out"; else cp "$2" "corpus/$1/$(basename "$2")"; fi
}
shopt -s nullglob globstar
for f in "$fx"/**/*.xplane.pb.gz; do
  # The XSpace targets get the small traces whole; big ones are slow per run and add little.
  if [[ $(stat -c %s "$f") -lt 1000000 ]]; then put xplane "$f" inflate; put memory_profile "$f" inflate; fi
done
for f in "$fx"/**/*.hlo.pb "$fx"/**/*.hlo_proto.pb "$fx"/**/*.hlo_proto.pb.gz; do
  [[ -s "$f" ]] || continue
  put hlo "$f" inflate; put memory_viewer "$f" inflate; put engine "$f"
  # gzip gets the small gzipped files only: a multi-MB trace makes each run slow and adds little.
  [[ "$f" == *.gz ]] && put gzip "$f"
done
for f in "$fx"/pprof/**/*.prof; do
  put pprof "$f" inflate; put device_memory "$f" inflate; put gzip "$f"; put engine "$f"
done
mkdir -p corpus/sniff && cp corpus/hlo/* corpus/pprof/* corpus/xplane/* corpus/sniff/
# Crafted bombs from the test suite, if dumped: TIDEMARK_SWEEP_DUMP=fuzz/crafted cargo test --test hostile crafted
if [[ -d crafted ]]; then
  for f in crafted/*; do
    case "$f" in
      # The big pprof bombs sit at the frame budget (seconds per run): they would starve the fuzzer.
      *.prof) [[ $(stat -c %s "$f") -lt 65536 ]] && put device_memory "$f" ;;
      *.hlo.pb) put memory_viewer "$f" ;;
      *.xplane.pb) put memory_profile "$f" ;;
    esac
  done
fi
du -sh corpus/* | sort -k2
