#!/usr/bin/env bash
# The whole test suite: formatting, lints, the official A2A interop clients,
# then every test in the workspace. CI runs exactly this (see .ci/run).
#
# It installs what the tests need beyond Rust by itself:
#   interop/setup.sh  -> interop/.venv (PyPI a2a-sdk 1.x) and interop/node_modules (@a2a-js/sdk),
#                        interop/.venv03 (with the grpc extra) and interop/js03/node_modules (their 0.3 lines),
#                        interop/agui/node_modules (@ag-ui/client and @ag-ui/proto 1.0.0),
#                        chromium and interop/console/node_modules (the console's browser tests)
#   crates/switchboard-store-postgres/install-postgres.sh -> Debian's PostgreSQL server binaries
#   (the tests start throwaway servers on loopback ports themselves)
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy --all-targets -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

echo "== cargo doc -D warnings (the docs' links stay true)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet

echo "== the SDK's default features stay light (no gRPC, no database driver)"
heavy=$(cargo tree -p hello-agent -e normal,build --prefix none | sort -u | grep -E '^(tonic|prost|protox|sqlx|sqlx-postgres|sqlx-sqlite|opentelemetry|opentelemetry_sdk|opentelemetry-otlp|tracing-opentelemetry) ' || true)
if [ -n "$heavy" ]; then
  echo "hello-agent (switchboard-sdk with default features) depends on:" >&2
  echo "$heavy" >&2
  exit 1
fi
echo "hello-agent: $(cargo tree -p hello-agent -e normal --prefix none | sort -u | wc -l) crates, none of tonic/prost/protox/sqlx/opentelemetry"

echo "== an SDK feature pulls in only what it needs"
# crate names in the SDK's tree with features $1 (normal dependencies)
sdk_tree() { cargo tree -p switchboard-sdk --no-default-features --features "$1" -e normal --prefix none | sort -u | cut -d' ' -f1; }
refuse() { # features, crates that must not be there, why
  local found
  found=$(sdk_tree "$1" | grep -xE "$2" || true)
  if [ -n "$found" ]; then
    echo "switchboard-sdk --features $1 depends on $(echo "$found" | tr '\n' ' ')($3)" >&2
    exit 1
  fi
}
# The console adds nothing to an SDK build without its feature.
refuse server 'switchboard-console' "the console is feature console's"
refuse "server,ops,grpc,sqlite,push,client,agui,bridge,auth,printer" 'switchboard-console' "the console is feature console's"
# A JSON-RPC/REST client compiles no gRPC; gRPC comes with the SDK's grpc.
refuse client 'tonic|tonic-prost|prost|switchboard-proto' "the client's gRPC is feature grpc's"
refuse printer 'tonic|tonic-prost|switchboard-proto' "the client's gRPC is feature grpc's"
# Serving /agui over the hosted agent needs no client.
refuse agui 'switchboard-client|reqwest' "only bridge (a remote agent) needs the client"
echo "console, client gRPC and the AG-UI endpoint's client: only with their features"

echo "== interop clients and sample servers (official SDKs)"
bash interop/setup.sh
# From here on a missing interop install is a failure, not a skip.
export SWITCHBOARD_REQUIRE_INTEROP=1

echo "== PostgreSQL server binaries"
bash crates/switchboard-store-postgres/install-postgres.sh
export SWITCHBOARD_REQUIRE_POSTGRES=1

echo "== doc tests"
cargo test --workspace --doc --quiet

echo "== tests"
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --no-fail-fast
else
  cargo test --workspace --no-fail-fast
fi
