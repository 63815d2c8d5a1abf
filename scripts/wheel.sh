#!/usr/bin/env bash
# Builds the notebook package (pyproject.toml, python/tidemark/) into target/wheels/tidemark-*.whl: the
# page (`trunk build --release`), copied into the package, and the native CLI, built by maturin.
# Install it with `pip install target/wheels/tidemark-*.whl`.
#
# scripts/wheel.sh --page-built: take dist/ as it is (scripts/test.sh has just built it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
case "${1:-}" in
  --page-built) ;;
  "") trunk build --release ;;
  *) echo "usage: scripts/wheel.sh [--page-built]" >&2; exit 2 ;;
esac

page=python/tidemark/page
rm -rf "$page" && mkdir -p "$page"
cp dist/tidemark-web.js dist/tidemark-web_bg.wasm dist/tidemark-engine.js dist/tidemark-engine_bg.wasm dist/app.css "$page/"

# maturin in a venv of its own, so the machine's Python is left as it is.
build_env=target/py-build
if [ ! -x "$build_env/bin/maturin" ]; then
  python3 -m venv "$build_env"
  "$build_env/bin/pip" install -q 'maturin>=1.5,<2'
fi
rm -f target/wheels/tidemark-*.whl
"$build_env/bin/maturin" build --release --locked --out target/wheels
