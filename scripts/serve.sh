#!/usr/bin/env bash
# Builds the release page and serves it on http://127.0.0.1:${PORT:-8080}/ with the bundled demo.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
PORT=${PORT:-8080}
trunk build --release
echo
echo "Tidemark is at http://127.0.0.1:$PORT/#demo  (the demo profiles; drop your own files on the page)"
echo "Press Ctrl-C to stop."
exec python3 -m http.server "$PORT" --bind 127.0.0.1 --directory dist
