#!/usr/bin/env bash
# The console's browser tests (idempotent):
#   chromium                      Debian's package (apt-get), when `chromium` is not on PATH
#   interop/console/node_modules  npm ci of package.json / package-lock.json (playwright-core, axe-core)
# The npm part is skipped when its stamp records the same lock file and node version.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE"

if command -v chromium >/dev/null 2>&1; then
  echo "setup: chromium present ($(command -v chromium))"
else
  echo "setup: installing chromium (apt-get)"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
fi

STAMP=node_modules/.console-stamp
want="$(cat package-lock.json | sha256sum | cut -d' ' -f1) $(node --version)"
if [ -d node_modules ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$want" ]; then
  echo "setup: console node modules up to date"
else
  echo "setup: npm ci in interop/console"
  npm ci --silent --no-audit --no-fund
  echo "$want" > "$STAMP"
fi
