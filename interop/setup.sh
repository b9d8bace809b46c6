#!/usr/bin/env bash
# Install the official A2A SDKs used by the interop harness (idempotent).
#   interop/.venv         python3 venv with py/requirements.txt (a2a-sdk[http-server,grpc,signing]==1.3.0, uvicorn)
#   interop/.venv03       python3 venv with py03/requirements.txt (a2a-sdk[http-server,grpc] 0.3.x)
#   interop/js03/node_modules  npm ci of js03/package.json / package-lock.json (@a2a-js/sdk 0.3.x)
#   interop/node_modules  npm ci of package.json / package-lock.json (@a2a-js/sdk 1.3.0, express 5)
#   interop/agui/node_modules  npm ci of agui/package.json / package-lock.json (@ag-ui/client, core, encoder, proto 1.0.0; @copilotkit/core 1.75.0)
#   chromium + interop/console/node_modules  console/setup.sh: Debian's chromium (apt-get, when missing), playwright-core, axe-core
#   interop/mcp/node_modules   npm ci of mcp/package.json / package-lock.json (@modelcontextprotocol/sdk 1.32.2)
# Each part is skipped when its stamp file records the same inputs (requirements,
# lock file, interpreter version). Needs only python3 (+ pip/venv) and node/npm.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE"

hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

# ---- Python -----------------------------------------------------------------
PY_STAMP=.venv/.interop-stamp
py_want="$(hash_of py/requirements.txt) $(python3 -c 'import sys; print(sys.version.split()[0])')"
if [ -x .venv/bin/python ] && [ "$(cat "$PY_STAMP" 2>/dev/null)" = "$py_want" ]; then
  echo "setup: python venv up to date"
else
  echo "setup: installing python packages into interop/.venv"
  if [ ! -x .venv/bin/python ]; then
    if ! python3 -m venv .venv 2>/dev/null; then
      # e.g. Debian without python3-venv's ensurepip: make a bare venv, use the system pip.
      rm -rf .venv
      python3 -m venv --without-pip .venv
    fi
  fi
  # `python -m pip`, not bin/pip: the scripts of a venv copied elsewhere (a work tree's)
  # still name the original's interpreter on their `#!` line, and would install there.
  if .venv/bin/python -m pip --version >/dev/null 2>&1; then
    .venv/bin/python -m pip install -q --disable-pip-version-check -r py/requirements.txt
  else
    python3 -m pip --python .venv/bin/python install -q --disable-pip-version-check -r py/requirements.txt
  fi
  echo "$py_want" > "$PY_STAMP"
fi

# ---- Python, A2A 0.3 (a separate venv: a2a-sdk 0.3.x and 1.x cannot coexist) --
PY03_STAMP=.venv03/.interop-stamp
py03_want="$(hash_of py03/requirements.txt) $(python3 -c 'import sys; print(sys.version.split()[0])')"
if [ -x .venv03/bin/python ] && [ "$(cat "$PY03_STAMP" 2>/dev/null)" = "$py03_want" ]; then
  echo "setup: python 0.3 venv up to date"
else
  echo "setup: installing python packages into interop/.venv03"
  if [ ! -x .venv03/bin/python ]; then
    if ! python3 -m venv .venv03 2>/dev/null; then
      rm -rf .venv03
      python3 -m venv --without-pip .venv03
    fi
  fi
  if .venv03/bin/python -m pip --version >/dev/null 2>&1; then
    .venv03/bin/python -m pip install -q --disable-pip-version-check -r py03/requirements.txt
  else
    python3 -m pip --python .venv03/bin/python install -q --disable-pip-version-check -r py03/requirements.txt
  fi
  echo "$py03_want" > "$PY03_STAMP"
fi

# ---- Node -------------------------------------------------------------------
JS_STAMP=node_modules/.interop-stamp
js_inputs=(package.json)
[ -f package-lock.json ] && js_inputs+=(package-lock.json)
js_want="$(hash_of "${js_inputs[@]}") $(node --version)"
if [ -d node_modules ] && [ "$(cat "$JS_STAMP" 2>/dev/null)" = "$js_want" ]; then
  echo "setup: node_modules up to date"
else
  echo "setup: installing npm packages into interop/node_modules"
  if [ -f package-lock.json ]; then
    npm ci --no-audit --no-fund --loglevel=error
  else
    npm install --no-audit --no-fund --loglevel=error
    js_want="$(hash_of package.json package-lock.json) $(node --version)"
  fi
  echo "$js_want" > "$JS_STAMP"
fi

# ---- Node, A2A 0.3 (its own package.json/lock: @a2a-js/sdk 0.3.x) ------------
JS03_STAMP=js03/node_modules/.interop-stamp
js03_want="$(hash_of js03/package.json js03/package-lock.json) $(node --version)"
if [ -d js03/node_modules ] && [ "$(cat "$JS03_STAMP" 2>/dev/null)" = "$js03_want" ]; then
  echo "setup: js03/node_modules up to date"
else
  echo "setup: installing npm packages into interop/js03/node_modules"
  (cd js03 && npm ci --no-audit --no-fund --loglevel=error)
  echo "$js03_want" > "$JS03_STAMP"
fi

# ---- Node, AG-UI (@ag-ui/client and @ag-ui/proto 1.0.0: the official verifier and decoder) --
AGUI_STAMP=agui/node_modules/.interop-stamp
agui_want="$(hash_of agui/package.json agui/package-lock.json) $(node --version)"
if [ -d agui/node_modules ] && [ "$(cat "$AGUI_STAMP" 2>/dev/null)" = "$agui_want" ]; then
  echo "setup: agui/node_modules up to date"
else
  echo "setup: installing npm packages into interop/agui/node_modules"
  (cd agui && npm ci --no-audit --no-fund --loglevel=error)
  echo "$agui_want" > "$AGUI_STAMP"
fi

# ---- The console's browser tests: Debian's chromium, playwright-core, axe-core --
bash console/setup.sh
# ---- Node, MCP (@modelcontextprotocol/sdk: the official TypeScript MCP client) --
MCP_STAMP=mcp/node_modules/.interop-stamp
mcp_want="$(hash_of mcp/package.json mcp/package-lock.json) $(node --version)"
if [ -d mcp/node_modules ] && [ "$(cat "$MCP_STAMP" 2>/dev/null)" = "$mcp_want" ]; then
  echo "setup: mcp/node_modules up to date"
else
  echo "setup: installing npm packages into interop/mcp/node_modules"
  (cd mcp && npm ci --no-audit --no-fund --loglevel=error)
  echo "$mcp_want" > "$MCP_STAMP"
fi
