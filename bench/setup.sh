#!/usr/bin/env bash
# bench/setup.sh - one-time setup for switchboard's load benchmark (idempotent).
#
# 1. Copies the shared peer servers + harness (/work/shared/peers-bench, or $PEERS_SRC)
#    to bench/out/peers (without their results/ and build products).
# 2. Runs the peers' own setup.sh there: Python venv, npm ci, release builds of
#    raw-axum and the two Rust SDK peers, `cargo install oha` (skips what is built).
# 3. Builds switchboard with the dist profile (fat LTO, as shipped; CARGO_TARGET_DIR, default /work/target-bench), and the
#    grpc_bench_frame example (the gRPC row's request body and answer check).
# 4. Installs h2load (Debian's nghttp2-client) for bench/bindings.sh.
#
# Needs the package registries (PyPI, npm, crates.io). Not time-bounded: the first
# run takes a while on 2 cores; later runs only check.
set -euo pipefail
BENCH=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$BENCH/.." && pwd)
PEERS_SRC=${PEERS_SRC:-/work/shared/peers-bench}
PEERS=$BENCH/out/peers
export CARGO_TARGET_DIR_SB=${CARGO_TARGET_DIR:-/work/target-bench}

mkdir -p "$PEERS"
[ -d "$PEERS_SRC" ] || { echo "peer harness not found at $PEERS_SRC (set PEERS_SRC)" >&2; exit 1; }
echo "== copying $PEERS_SRC -> $PEERS"
if command -v rsync >/dev/null; then
  rsync -a --chmod=u+w --exclude results/ --exclude .venv/ --exclude node_modules/ --exclude target/ \
    "$PEERS_SRC"/ "$PEERS"/
else
  # cp fallback: copy the sources only (the shared folder is read-only, so make the copy writable)
  (cd "$PEERS_SRC" && find . \( -name results -o -name .venv -o -name node_modules -o -name target \) -prune -o -type f -print) |
    while read -r f; do
      mkdir -p "$PEERS/$(dirname "$f")"
      if ! cmp -s "$PEERS_SRC/$f" "$PEERS/$f"; then
        rm -f "$PEERS/$f"; cp -p "$PEERS_SRC/$f" "$PEERS/$f"
      fi
    done
  chmod -R u+w "$PEERS"
fi

echo "== peers: venv, npm, raw-axum, rust peers, oha"
(
  cd "$PEERS"
  # Peer builds use their own target/ dirs inside bench/out/peers (run_all.sh expects them there).
  unset CARGO_TARGET_DIR
  export PATH="$HOME/.cargo/bin:$PATH"
  # The peers' setup.sh re-runs pip/npm/cargo every time; skip it when everything is there.
  if [ -x .venv/bin/python ] && .venv/bin/python -c 'import a2a, uvicorn' 2>/dev/null \
     && [ -e js/node_modules/@a2a-js/sdk/package.json ] \
     && [ -x raw-axum/target/release/raw-axum ] \
     && [ -x rust-a2a-lf/target/release/rust-a2a-lf ] \
     && [ -x rust-a2a-protocol/target/release/rust-a2a-protocol ] \
     && command -v oha >/dev/null; then
    echo "peers already set up (delete bench/out/peers to redo)"
  else
    bash ./setup.sh
  fi
)

echo "== switchboard dist build (CARGO_TARGET_DIR=$CARGO_TARGET_DIR_SB)"
(cd "$REPO" && CARGO_TARGET_DIR=$CARGO_TARGET_DIR_SB cargo build --profile dist -p switchboard)
ls -l "$CARGO_TARGET_DIR_SB/dist/switchboard"
# The gRPC row's request frame writer / answer checker (run.sh: GRPC_FRAME).
(cd "$REPO" && CARGO_TARGET_DIR=$CARGO_TARGET_DIR_SB cargo build --profile dist -p switchboard-proto --example grpc_bench_frame)
ls -l "$CARGO_TARGET_DIR_SB/dist/examples/grpc_bench_frame"
# h2load (Debian's nghttp2-client): bench/bindings.sh drives all three bindings with it.
if ! command -v h2load >/dev/null; then
  echo "== installing h2load (nghttp2-client)"
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get install -y nghttp2-client >/dev/null || { $SUDO apt-get update >/dev/null && $SUDO apt-get install -y nghttp2-client >/dev/null; }
fi
echo "setup done. oha: $(PATH="$HOME/.cargo/bin:$PATH" command -v oha), h2load: $(command -v h2load)"
