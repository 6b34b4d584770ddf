#!/usr/bin/env bash
# Install everything ferry's build and tests need. Idempotent and fast when
# everything is already present:
#   - apt packages (apt-get update only if something is missing);
#   - any redis-server service started by the package is stopped/disabled
#     (tests never use port 6379 anyway: they always pick a free port);
#   - .venv at the repo root with requirements.txt installed, redone only
#     when the venv is missing/broken or requirements.txt changed.
# Environment: PYTHON (default: python3 on PATH), SKIP_APT=1 to skip apt.
# --build: only what building the server needs (make run), no venv.
set -euo pipefail

BUILD_ONLY=0
[ "${1:-}" = "--build" ] && BUILD_ONLY=1

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

log() { printf 'install-deps: %s\n' "$*" >&2; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; fi
fi

PYTHON="${PYTHON:-python3}"

# ---------------------------------------------------------------- apt
# the server's build: a C compiler, and Lua 5.1 with the cjson and bit
# libraries Redis's scripts expect (make LUA=no needs none of the three),
# and OpenSSL for TLS (make TLS=no needs neither libssl-dev nor openssl)
BUILD_PKGS=(build-essential gcc pkg-config liblua5.1-0-dev lua-cjson-dev lua-bitop-dev libssl-dev openssl)
APT_PKGS=("${BUILD_PKGS[@]}" clang libcriterion-dev redis-server redis-tools
          llvm libclang-rt-14-dev strace valgrind linux-perf prometheus)
[ "$BUILD_ONLY" -eq 1 ] && APT_PKGS=("${BUILD_PKGS[@]}")
# python3-venv only matters when python3 is Debian's and lacks venv/ensurepip
# (a pyenv python3 has them built in).
if ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    APT_PKGS+=(python3-venv)
fi

missing=()
if [ "${SKIP_APT:-0}" != "1" ] && command -v dpkg-query >/dev/null 2>&1; then
    status="$(dpkg-query -W -f='${Package} ${Status}\n' "${APT_PKGS[@]}" 2>/dev/null || true)"
    for p in "${APT_PKGS[@]}"; do
        if ! grep -q "^$p install ok installed$" <<<"$status"; then
            missing+=("$p")
        fi
    done
fi

stop_redis_service() {
    # The Debian package starts a redis-server on 6379; we never use it.
    if command -v systemctl >/dev/null 2>&1; then
        $SUDO systemctl stop redis-server >/dev/null 2>&1 || true
        $SUDO systemctl disable redis-server >/dev/null 2>&1 || true
    fi
    if command -v service >/dev/null 2>&1; then
        $SUDO service redis-server stop >/dev/null 2>&1 || true
    fi
    if [ -x /etc/init.d/redis-server ]; then
        $SUDO /etc/init.d/redis-server stop >/dev/null 2>&1 || true
    fi
}

if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ] && [ -z "$SUDO" ]; then
        log "missing packages: ${missing[*]} (not root and no sudo: install them by hand)"
        exit 1
    fi
    log "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # Keep package scripts from starting services while we install
    # (standard policy-rc.d trick; only if the machine has none of its own).
    policy_added=0
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
        $SUDO chmod +x /usr/sbin/policy-rc.d
        policy_added=1
    fi
    rc=0
    $SUDO apt-get update -qq || rc=$?
    if [ "$rc" -eq 0 ]; then
        $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" || rc=$?
    fi
    if [ "$policy_added" -eq 1 ]; then $SUDO rm -f /usr/sbin/policy-rc.d; fi
    if [ "$rc" -ne 0 ]; then log "apt-get failed ($rc)"; exit "$rc"; fi
    case " ${missing[*]} " in
        *" redis-server "*) stop_redis_service ;;
    esac
fi

[ "$BUILD_ONLY" -eq 1 ] && exit 0

# ---------------------------------------------------------------- node
# Node client libraries the tests drive (BullMQ: tests/integration/test_bullmq.py),
# pinned by tests/integration/node/package-lock.json. Debian's nodejs and npm
# only when the commands are missing (a NodeSource nodejs bundles npm).
NODE_DIR="$ROOT/tests/integration/node"
if [ -f "$NODE_DIR/package-lock.json" ]; then
    node_missing=()
    command -v node >/dev/null 2>&1 || node_missing+=(nodejs)
    command -v npm >/dev/null 2>&1 || node_missing+=(npm)
    if [ "${#node_missing[@]}" -gt 0 ] && [ "${SKIP_APT:-0}" != "1" ]; then
        log "installing: ${node_missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends "${node_missing[@]}"
    fi
    node_want="$(sha256sum "$NODE_DIR/package-lock.json" | cut -d' ' -f1)"
    if [ "$(cat "$NODE_DIR/node_modules/.lock.stamp" 2>/dev/null)" != "$node_want" ]; then
        log "installing tests/integration/node (npm ci)"
        (cd "$NODE_DIR" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error)
        echo "$node_want" > "$NODE_DIR/node_modules/.lock.stamp"
    fi
fi

# ---------------------------------------------------------------- venv
VENV="$ROOT/.venv"
STAMP="$VENV/.requirements.stamp"
REQS=(requirements.txt)
[ -f analysis/requirements.txt ] && REQS+=(analysis/requirements.txt)
want="$( { cat "${REQS[@]}"; "$PYTHON" -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1)"

venv_ok=0
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
    venv_ok=1
fi
if [ "$venv_ok" -eq 1 ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
    exit 0
fi

if [ "$venv_ok" -eq 0 ]; then
    log "creating $VENV with $("$PYTHON" --version 2>&1)"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
fi
log "installing ${REQS[*]} into .venv"
for r in "${REQS[@]}"; do
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$r"
done
echo "$want" > "$STAMP"
