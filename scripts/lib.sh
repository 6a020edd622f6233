# Shared set-up for scripts/serve and scripts/test: a virtual environment with the project
# installed, and the Debian tools the certification battery uses. Sourced, not run.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${CROUPIER_VENV:-$ROOT/.venv}"

find_python() {
  local candidate
  for candidate in "${PYTHON:-}" python3.13 python3.12 python3.11 python3; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 &&
      "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
  echo "croupier needs Python 3.11 or newer: install it (Debian: apt-get install python3 python3-venv) or set PYTHON=/path/to/python3.11" >&2
  return 1
}

# ensure_venv EXTRAS: create .venv and install the project with the given extras, again only
# when pyproject.toml changed since the last install. "dev" includes everything "certify"
# needs, so running the server after the tests (or during them) does not reinstall.
ensure_venv() {
  local extras="$1" python stamp hash have
  python="$(find_python)"
  if [ ! -x "$VENV/bin/python" ]; then
    echo "==> creating $VENV"
    "$python" -m venv "$VENV"
  fi
  stamp="$VENV/.croupier-installed"
  hash="$(sha256sum "$ROOT/pyproject.toml" | cut -d' ' -f1)"
  have="$(cat "$stamp" 2>/dev/null || true)"
  if [ "$have" = "$hash $extras" ] || [ "$have" = "$hash dev" ]; then
    return 0
  fi
  echo "==> installing croupier[$extras] into $VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
  "$VENV/bin/python" -m pip install --quiet -e "$ROOT[$extras]"
  echo "$hash $extras" >"$stamp"
}

# ensure_debian_packages BINARY:PACKAGE ...: install what is missing when we may (root with
# apt-get), otherwise say exactly what to run. Never fatal: the callers skip what is absent.
ensure_debian_packages() {
  local missing=() pair
  for pair in "$@"; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "==> installing Debian packages: ${missing[*]}"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; } >/dev/null; then
      echo "warning: could not install ${missing[*]}; the tests that use them will be skipped" >&2
    fi
  else
    echo "note: install ${missing[*]} (Debian: sudo apt-get install ${missing[*]}) for the full certification battery; the tests that use them are skipped until then" >&2
  fi
}

# ensure_postgres: a PostgreSQL server on 127.0.0.1:5432 for the shared stores' tests, and
# CROUPIER_TEST_POSTGRES naming a role there that may create databases. A server already
# running is used as it is; a missing one is installed (Debian: postgresql) and started when
# we are root; otherwise it says what to do (the tests that need it fail in CI, are skipped
# elsewhere, with that message).
ensure_postgres() {
  local url="${CROUPIER_TEST_POSTGRES:-postgresql://postgres@127.0.0.1:5432/postgres}"
  if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
      echo "note: no PostgreSQL on 127.0.0.1:5432: install and start one (Debian: sudo apt-get install postgresql), or set CROUPIER_TEST_POSTGRES" >&2
      return 0
    fi
    if ! command -v pg_ctlcluster >/dev/null 2>&1; then
      echo "==> installing PostgreSQL"
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; } >/dev/null ||
        { echo "warning: could not install postgresql" >&2; return 0; }
    fi
    echo "==> starting PostgreSQL"
    local version
    version="$(ls /etc/postgresql 2>/dev/null | sort -n | tail -1)"
    pg_ctlcluster "$version" main start 2>/dev/null || service postgresql start >/dev/null 2>&1 || true
    for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.5; done
  fi
  if ! psql "$url" -Atqc 'select 1' >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    # A fresh Debian server asks for a password over TCP: give the tests a role of their own.
    su postgres -c "psql -q -c \"DO \\$\\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'croupier_test') THEN CREATE ROLE croupier_test LOGIN CREATEDB PASSWORD 'croupier_test'; END IF; END \\$\\$;\"" >/dev/null 2>&1 || true
    url="postgresql://croupier_test:croupier_test@127.0.0.1:5432/postgres"
  fi
  export CROUPIER_TEST_POSTGRES="$url"
}

# ensure_client: the browser client's dependencies (npm ci) and, with "build", its built files
# in client-web/dist, which croupier serve serves. Rebuilt only when a source file is newer.
ensure_client() {
  local want="${1:-}" client="$ROOT/client-web"
  if ! command -v npm >/dev/null 2>&1; then
    echo "note: npm (Node.js 20 or newer) is needed for the browser client: install nodejs and npm (Debian: apt-get install nodejs npm); the server runs without it" >&2
    return 0
  fi
  if [ ! -d "$client/node_modules" ] || [ "$client/package-lock.json" -nt "$client/node_modules/.package-lock.json" ]; then
    echo "==> installing the browser client's packages (npm ci)"
    npm --prefix "$client" ci --no-audit --no-fund --loglevel=error
  fi
  if [ "$want" = build ]; then
    if [ ! -f "$client/dist/index.html" ] ||
      [ -n "$(find "$client/src" "$client/index.html" "$client/public" -newer "$client/dist/index.html" -print -quit 2>/dev/null)" ]; then
      echo "==> building the browser client"
      npm --prefix "$client" run build --silent
    fi
  fi
}
