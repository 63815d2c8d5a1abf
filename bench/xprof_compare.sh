#!/usr/bin/env bash
# Tidemark's Memory Profile vs XProf's own converter on the same files, as a ratio (issue 3 §5).
#
# Both sides start from the file on disk and end with XProf's memory_profile JSON: XProf via
# xprof.convert.raw_to_tool_data.xspace_to_tool_data(..., "memory_profile", use_saved_result=False), as
# its web server calls it (bench/xprof_time.py, which the in-browser bench uses too); Tidemark via
# `cargo bench --bench memory_profile -- FILE...` (release build: read bytes, decode, analyse, JSON, and
# the page's view). Medians of REPEAT runs of XProf, and of as many Tidemark runs as fill the same time
# (at least REPEAT): on a shared machine a neighbour's load comes in bursts, and a burst that covers
# all of Tidemark's few milliseconds but a fraction of XProf's second would set the round's ratio.
#
# XProf needs Python 3.12 and `pip install xprof==2.24.2` (the version the fixtures' oracle outputs come
# from), e.g.:  python3.12 -m venv /tmp/xprof-venv && /tmp/xprof-venv/bin/pip install xprof==2.24.2
# XProf reads uncompressed .xplane.pb only, so gzipped inputs are inflated to a temporary folder first.
#
# usage: [ROUNDS=N] [REPEAT=N] XPROF_PYTHON=/tmp/xprof-venv/bin/python bench/xprof_compare.sh [FILE.xplane.pb[.gz] ...]
# default files: d2_tf_cnn, d1_tf_keras_bfc and the larger real trace bench/traces/d2_tf_cnn_250.xplane.pb.gz
# (the d2 fixture script run for 250 steps; bench/make_trace.sh makes longer ones).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${XPROF_PYTHON:-python3}"
REPEAT="${REPEAT:-3}"
"$PY" bench/xprof_time.py --check
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  files=(tests/fixtures/tf/d2_tf_cnn/d2_tf_cnn.xplane.pb.gz tests/fixtures/tf/d1_tf_keras_bfc/d1_tf_keras_bfc.xplane.pb.gz
    bench/traces/d2_tf_cnn_250.xplane.pb.gz)
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
plain=()
for f in "${files[@]}"; do
  case "$f" in
    *.gz) out="$tmp/$(basename "${f%.gz}")"; gzip -dc "$f" > "$out"; plain+=("$(realpath "$out")") ;;
    *) plain+=("$(realpath "$f")") ;;
  esac
done

# The CPU time the hypervisor gave to other machines ("steal", /proc/stat) as a percentage of all CPU
# time since the counters `$1` (from `cpu_counters`): on a shared virtual machine, the load that
# neither side's own numbers show. XProf's converter runs on one core and Tidemark on two, so the two
# suffer from it differently.
cpu_counters() { awk '$1=="cpu"{t=0; for (i=2;i<=NF;i++) t+=$i; print t, $9; exit}' /proc/stat 2>/dev/null || echo "0 0"; }
steal_since() {
  local before="$1"
  awk -v b="$before" '$1=="cpu"{t=0; for (i=2;i<=NF;i++) t+=$i; split(b, x, " "); dt=t-x[1]; printf "%.0f", (dt > 0 ? 100*($9-x[2])/dt : 0); exit}' /proc/stat 2>/dev/null || echo "?"
}

# One round: both sides on each file in turn, back to back; prints a table and appends "file<TAB>ratio"
# lines to $tmp/ratios.
round() {
  local xprof_ms ours_ms span c xprof_steal ours_steal
  printf '%-34s %12s %7s %12s %7s %8s\n' file xprof_ms steal tidemark_ms steal ratio
  for f in "${plain[@]}"; do
    c="$(cpu_counters)"
    xprof_ms="$(REPEAT="$REPEAT" "$PY" bench/xprof_time.py "$f" 2>/dev/null | awk -F'\t' '$1=="median_ms"{print $3}')"
    xprof_steal="$(steal_since "$c")"
    span="$(awk -v x="$xprof_ms" -v r="$REPEAT" 'BEGIN{ printf "%d", (x > 0 ? x : 0) * r }')"
    c="$(cpu_counters)"
    ours_ms="$(TIDEMARK_BENCH_RUNS="$REPEAT" TIDEMARK_BENCH_MIN_MS="$span" cargo bench --quiet --bench memory_profile -- "$f" | awk -F'\t' '$1=="median_ms"{print $3}')"
    ours_steal="$(steal_since "$c")"
    ratio="$(awk -v x="$xprof_ms" -v o="$ours_ms" 'BEGIN{ if (o > 0 && x > 0) printf "%.1f", x / o; else print "n/a" }')"
    printf '%-34s %12s %6s%% %12s %6s%% %8s\n' "$(basename "$f")" "$xprof_ms" "$xprof_steal" "$ours_ms" "$ours_steal" "${ratio}x"
    printf '%s\t%s\t%s\n' "$(basename "$f")" "$ratio" "$ours_steal" >> "$tmp/ratios"
  done
}

# The machine's load moves both sides' times from one minute to the next: with ROUNDS=N (default 1)
# the rounds run back to back and a last table gives each file's ratios and their median, a ratio
# marked * where the hypervisor took 5 % or more of the CPU time while Tidemark ran.
ROUNDS="${ROUNDS:-1}"
for ((r = 1; r <= ROUNDS; r++)); do
  [ "$ROUNDS" -gt 1 ] && printf '\nround %d of %d (load %s)\n' "$r" "$ROUNDS" "$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')"
  round
done
if [ "$ROUNDS" -gt 1 ]; then
  printf '\n%-34s %8s  %s\n' file median "ratios by round"
  for f in "${plain[@]}"; do
    b="$(basename "$f")"
    awk -F'\t' -v f="$b" '$1==f && $2!="n/a"{print $2}' "$tmp/ratios" | sort -g | awk -v f="$b" -v all="$(awk -F'\t' -v f="$b" '$1==f{printf "%s%sx%s", sep, $2, ($3+0 >= 5 ? "*" : ""); sep=" "}' "$tmp/ratios")" \
      '{v[NR]=$1} END{ m = NR ? (NR % 2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2) : 0; printf "%-34s %7.1fx  %s\n", f, m, all }'
  done
  printf '(* steal of 5 %% or more while Tidemark ran: the hypervisor gave that share of the CPU to other machines)\n'
fi
