#!/usr/bin/env bash
# Whole-process time and peak memory (RSS) of the native CLI against XProf's converter, file by file
# (issue 20: the Memory Profile's peak memory against the file's size; issue 18: the Trace Viewer's JSON).
#
# For each FILE and each TOOL: `tidemark <tool> FILE --json > /dev/null` run REPEAT times under
# /usr/bin/time (median wall seconds and median peak RSS), then XProf 2.24.2's `xspace_to_tool_data` once
# in a fresh Python process (bench/xprof_once.py: the conversion's time, not the import, and the
# process's peak RSS) unless XPROF=0. Prints a tab-separated row per file and tool:
#   file  size_MB  tool  tidemark_s  tidemark_rss_MB  rss/file  xprof_s  xprof_rss_MB  xprof_rss/file  time_ratio
# Nothing is asserted. Tidemark's peak counts the file once (it is mapped), XProf's its copy in Python
# and everything it decodes; XProf's figure includes Python with xprof imported (about 40 MB).
#
# usage: REPEAT=3 TOOLS=memory_profile,trace_viewer bench/native_memory.sh FILE.xplane.pb ...
#   TIDEMARK: the CLI (default target/release/tidemark; `cargo build --release --bin tidemark`)
#   XPROF_PYTHON: a Python 3.12 with `pip install xprof==2.24.2` (default /tmp/xprof-venv/bin/python)
#   XPROF=0 to time Tidemark only (XProf needs several times the file in memory and minutes on 2 GB)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cli="${TIDEMARK:-target/release/tidemark}"
py="${XPROF_PYTHON:-/tmp/xprof-venv/bin/python}"
repeat="${REPEAT:-3}"
tools="${TOOLS:-memory_profile,trace_viewer}"
[ -x "$cli" ] || { echo "$cli is missing: cargo build --release --bin tidemark" >&2; exit 2; }
[ $# -gt 0 ] || { sed -n '2,16p' "$0" >&2; exit 2; }

median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
mb() { awk -v k="$1" 'BEGIN {printf "%.1f", k/1024}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a/b; else print "-"}'; }

printf 'file\tsize_MB\ttool\ttidemark_s\ttidemark_rss_MB\trss/file\txprof_s\txprof_rss_MB\txprof_rss/file\ttime_ratio\n'
for f in "$@"; do
  size_kb=$(( $(stat -c %s "$f") / 1024 ))
  for tool in ${tools//,/ }; do
    times=() rss=()
    for _ in $(seq "$repeat"); do
      out=$( { /usr/bin/time -f '%e %M' "$cli" "${tool//_/-}" "$f" --json > /dev/null 2>/dev/null; } 2>&1 | tail -1)
      times+=("${out% *}") rss+=("${out#* }")
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
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(basename "$f")" "$(mb "$size_kb")" "$tool" "$t" "$(mb "$r")" \
      "$(ratio "$r" "$size_kb")" "$xs" "$xr" "$xrf" "$tr"
  done
done
