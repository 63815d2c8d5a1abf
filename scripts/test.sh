#!/usr/bin/env bash
# Runs every test: the engine and CLI natively on the real fixtures, then the built page in headless
# Chromium. Installs what is missing first (Debian chromium, the build tools, npm packages).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
start=$(date +%s)
if ! command -v chromium >/dev/null; then
  printf '\n== apt-get install chromium chromium-driver\n'
  apt-get update -qq && apt-get install -y -qq chromium chromium-driver
fi
source scripts/setup.sh

printf '\n== native tests (engine, CLI)\n'
cargo test --locked

printf '\n== release build of the page\n'
trunk build --release

printf '\n== browser tests (headless chromium)\n'
cargo build --locked --bin tidemark
node --test --test-concurrency=1 tests/browser/

printf '\nall tests passed in %ss\n' "$(( $(date +%s) - start ))"
