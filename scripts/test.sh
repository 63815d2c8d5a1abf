#!/usr/bin/env bash
# Runs every test: formatting and clippy (native and the page's wasm build), the engine and CLI natively
# on the real fixtures, then the built page in headless Chromium. Installs what is missing first (Debian
# chromium, the build tools, npm packages).
#
# scripts/test.sh --quick: the edit loop's tier: native tests, `cargo fmt --check` and native clippy
# only (no installs, no page build, no browser).
#
# Tests whose device fixture (../shared/fixtures/device, beside the checkout) is absent pass as
# skipped; the run ends by saying how many. With CI=true an absent device fixture fails the run instead.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
start=$(date +%s)
quick=false
case "${1:-}" in
  --quick) quick=true ;;
  "") ;;
  *) echo "usage: scripts/test.sh [--quick]" >&2; exit 2 ;;
esac

if ! $quick; then
  if ! command -v chromium >/dev/null; then
    printf '\n== apt-get install chromium chromium-driver\n'
    apt-get update -qq && apt-get install -y -qq chromium chromium-driver
  fi
  source scripts/setup.sh
fi

printf '\n== cargo fmt --check\n'
cargo fmt --check

printf '\n== clippy (native)\n'
cargo clippy --locked --all-targets -- -D warnings

printf '\n== native tests (engine, CLI)\n'
# Each native test that skips for want of a device fixture adds a line here (tests/common::device_fixture).
export TIDEMARK_SKIP_LOG
TIDEMARK_SKIP_LOG=$(mktemp)
trap 'rm -f "$TIDEMARK_SKIP_LOG" "${browser_tap:-}"' EXIT
cargo test --locked
skipped="$(wc -l < "$TIDEMARK_SKIP_LOG") native (device fixture absent)"

if ! $quick; then
  printf '\n== clippy (the page and the engine worker, wasm32)\n'
  cargo clippy --locked --target wasm32-unknown-unknown --bin tidemark-web -- -D warnings
  cargo clippy --locked --target wasm32-unknown-unknown --no-default-features --bin tidemark-engine -- -D warnings

  printf '\n== release build of the page\n'
  trunk build --release

  printf '\n== the notebook package: its wheel in a fresh venv, a notebook run by a real kernel\n'
  scripts/wheel.sh --page-built
  python3 tests/notebook/run.py

  printf '\n== browser tests (headless chromium)\n'
  cargo build --locked --bin tidemark
  browser_tap=$(mktemp)
  node --test --test-concurrency=1 --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$browser_tap" tests/browser/
  skipped="$skipped, $(sed -n 's/^# skipped //p' "$browser_tap" | tail -1) browser"
fi

printf '\nall %stests passed in %ss; skipped: %s\n' "$($quick && echo 'quick-tier ' || true)" "$(( $(date +%s) - start ))" "$skipped"
