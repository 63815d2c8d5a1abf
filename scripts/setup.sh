#!/usr/bin/env bash
# Installs what building the page needs, skipping whatever is already there at the right version:
# the wasm32 target, trunk, the wasm-bindgen CLI matching Cargo.lock, and npm packages (wasm-opt from
# npm's binaryen; playwright-core for the browser tests). Sourced by serve.sh and test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

TRUNK_VERSION=0.21.14
WASM_BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/"/, "", $3); print $3; exit}' Cargo.lock)
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"

step() { printf '\n== %s\n' "$*"; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  step "rustup target add wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi
if [ "$(trunk --version 2>/dev/null | awk '{print $2}')" != "$TRUNK_VERSION" ]; then
  step "cargo install trunk $TRUNK_VERSION (about 13 minutes on 2 cores, once)"
  cargo install trunk --version "$TRUNK_VERSION" --locked
fi
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WASM_BINDGEN_VERSION" ]; then
  step "cargo install wasm-bindgen-cli $WASM_BINDGEN_VERSION (about 6 minutes, once)"
  # Not --locked: its lock file pins a crate version the registry here does not serve.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
fi
if ! command -v npm >/dev/null; then
  step "apt-get install nodejs npm"
  apt-get update -qq && apt-get install -y -qq nodejs npm
fi
if [ ! -x node_modules/.bin/wasm-opt ] || [ ! -d node_modules/playwright-core ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  step "npm ci"
  npm ci --no-audit --no-fund
fi
# Trunk runs offline (Trunk.toml) and so needs the registry's crates on disk.
cargo fetch --target wasm32-unknown-unknown >/dev/null
