#!/usr/bin/env bash
# Whole-process time and peak memory (RSS) of the native CLI against XProf's converter, file by file
# (issue 20: the Memory Profile's peak memory against the file's size; issue 18: the Trace Viewer's JSON).
#
# For each FILE and each TOOL: `tidemark <tool> FILE --json > /dev/null` run REPEAT times under
# /usr/bin/time (median wall seconds and median peak RSS), then XProf 2.24.2's `xspace_to_tool_data` once
# in a fresh Python process (bench/xprof_once.py: the conversion's time, not the import, and the
# process's peak RSS) unless XPROF=0. Prints a tab-separated row per file and tool:
#   file  size_MiB  tool  tidemark_s  tidemark_rss_MiB  rss/file  xprof_s  xprof_rss_MiB  xprof_rss/file  time_ratio
# Nothing is asserted. Tidemark's peak counts the file once (it is mapped), XProf's its copy in Python
# and everything it decodes; XProf's figure includes Python with xprof imported (about 40 MB).
#
# usage: REPEAT=3 TOOLS=memory_profile,trace_viewer bench/native_memory.sh FILE.xplane.pb ...
#   TIDEMARK: the CLI (default target/release/tidemark; `cargo build --release --bin tidemark`)
#   XPROF_PYTHON: a Python 3.12 with `pip install xprof==2.24.2` (default /tmp/xprof-venv/bin/python)
#   XPROF=0 to time Tidemark only (XProf needs several times the file in memory and minutes on 2 GB)
#   XPROF_RS: the `xprof-rs` server binary (`pip install xprof-rs`, 0.1.3), to time it too: for each file
#     and tool a fresh server on a log folder holding only that file, one request for the tool's data
#     (its time, wall, from curl), and the server's peak RSS (VmHWM) after it, with its peak once started
#     and idle beside it (xprof_rs_s, xprof_rs_rss_MiB, xprof_rs_idle_MiB columns).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cli="${TIDEMARK:-target/release/tidemark}"
py="${XPROF_PYTHON:-/tmp/xprof-venv/bin/python}"
repeat="${REPEAT:-3}"
tools="${TOOLS:-memory_profile,trace_viewer}"
[ -x "$cli" ] || { echo "$cli is missing: cargo build --release --bin tidemark" >&2; exit 2; }
[ $# -gt 0 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2; }

# xprof-rs on FILE for TOOL: "seconds peak_kb idle_kb" (seconds "-" when it gives no answer).
xprof_rs() {
  local file="$1" tool="$2" dir port pid idle out peak
  dir=$(mktemp -d)
  mkdir -p "$dir/plugins/profile/run"
  ln -s "$(realpath "$file")" "$dir/plugins/profile/run/host.xplane.pb"
  port=$(( 20000 + RANDOM % 20000 ))
  "$XPROF_RS" --logdir "$dir" --port "$port" > /dev/null 2>&1 &
  pid=$!
  for _ in $(seq 100); do curl -sf "http://localhost:$port/data/plugin/profile/runs" > /dev/null && break; sleep 0.1; done
  idle=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  out=$(curl -sf -o /dev/null -w '%{time_total}' "http://localhost:$port/data/plugin/profile/data?run=run&tag=$tool&host=host" || echo -)
  peak=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$dir"
  echo "$out $peak $idle"
}

measured=$(mktemp)
trap 'rm -f "$measured"' EXIT

median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
mb() { awk -v k="$1" 'BEGIN {printf "%.1f", k/1024}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a/b; else print "-"}'; }

printf 'file\tsize_MiB\ttool\ttidemark_s\ttidemark_rss_MiB\trss/file\txprof_s\txprof_rss_MiB\txprof_rss/file\ttime_ratio'
[ -n "${XPROF_RS:-}" ] && printf '\txprof_rs_s\txprof_rs_rss_MiB\txprof_rs_idle_MiB\txprof_rs_rss/file'
printf '\n'
for f in "$@"; do
  size_kb=$(( $(stat -c %s "$f") / 1024 ))
  for tool in ${tools//,/ }; do
    times=() rss=()
    for _ in $(seq "$repeat"); do
      /usr/bin/time -o "$measured" -f '%e %M' "$cli" "${tool//_/-}" "$f" --json > /dev/null 2>&1
      read -r s kb < "$measured"
      times+=("$s") rss+=("$kb")
    done
    t=$(printf '%s\n' "${times[@]}" | median)
    r=$(printf '%s\n' "${rss[@]}" | median)
    xs=- xr=- xrf=- tr=-
    if [ "${XPROF:-1}" != 0 ]; then
      line=$("$py" "$here/xprof_once.py" "$tool" "$f" 2>/dev/null | tail -1)
      xms=$(cut -f3 <<< "$line") xkb=$(cut -f4 <<< "$line")
      xs=$(awk -v m="$xms" 'BEGIN {printf "%.2f", m/1000}')
      xr=$(mb "$xkb") xrf=$(ratio "$xkb" "$size_kb") tr=$(ratio "$xs" "$t")
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s' "$(basename "$f")" "$(mb "$size_kb")" "$tool" "$t" "$(mb "$r")" \
      "$(ratio "$r" "$size_kb")" "$xs" "$xr" "$xrf" "$tr"
    if [ -n "${XPROF_RS:-}" ]; then
      read -r rs_s rs_peak rs_idle <<< "$(xprof_rs "$f" "$tool")"
      printf '\t%s\t%s\t%s\t%s' "$rs_s" "$(mb "$rs_peak")" "$(mb "$rs_idle")" "$(ratio "$rs_peak" "$size_kb")"
    fi
    printf '\n'
  done
done
