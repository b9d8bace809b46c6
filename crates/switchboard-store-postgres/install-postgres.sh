#!/bin/sh
# Installs PostgreSQL's server binaries for switchboard-store-postgres's tests.
#
# The tests (src/testing.rs) start a private server from the machine's own
# binaries: `initdb`, `pg_ctl` and `postgres`, found through
# `pg_config --bindir` or under /usr/lib/postgresql/*/bin. This script
# installs Debian's `postgresql` package when they are missing, and does
# nothing (in a few milliseconds) when they are there, so CI can call it
# before every test run:
#
#     sh crates/switchboard-store-postgres/install-postgres.sh
#     SWITCHBOARD_REQUIRE_POSTGRES=1 cargo test -p switchboard-store-postgres --features testing
#
# The package's own cluster is neither needed nor started: services are
# kept from starting during the install (policy-rc.d), and the tests run
# their servers as the `postgres` user the package creates.
set -eu

have_server() {
    bindir=$(pg_config --bindir 2>/dev/null || true)
    if [ -n "$bindir" ] && [ -x "$bindir/initdb" ] && [ -x "$bindir/pg_ctl" ] && [ -x "$bindir/postgres" ]; then
        return 0
    fi
    for dir in /usr/lib/postgresql/*/bin; do
        if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] && [ -x "$dir/postgres" ]; then
            return 0
        fi
    done
    return 1
}

if have_server && { [ "$(id -u)" -ne 0 ] || id postgres >/dev/null 2>&1; }; then
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO=sudo
    else
        echo "install-postgres.sh: PostgreSQL is missing and installing it needs root" >&2
        exit 1
    fi
else
    SUDO=
fi

echo "install-postgres.sh: installing Debian's postgresql package" >&2
export DEBIAN_FRONTEND=noninteractive

# Keep the package from starting its own cluster (invoke-rc.d asks
# policy-rc.d; 101 means "not allowed"). Leave an existing policy alone.
policy=/usr/sbin/policy-rc.d
added_policy=
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
    added_policy=1
fi
cleanup() {
    if [ -n "$added_policy" ]; then
        $SUDO rm -f "$policy"
    fi
}
trap cleanup EXIT

$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends postgresql >/dev/null

if ! have_server; then
    echo "install-postgres.sh: postgresql installed, but no initdb/pg_ctl/postgres found" >&2
    exit 1
fi
echo "install-postgres.sh: PostgreSQL server binaries are in $(pg_config --bindir 2>/dev/null || ls -d /usr/lib/postgresql/*/bin)" >&2
