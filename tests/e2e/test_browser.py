"""The browser client's own tests, run from pytest: the Vitest codec tests and the end-to-end
suites (a real ``croupier serve`` driven by Debian's headless Chromium through
playwright-core), one pytest test per end-to-end file so that parallel workers share them.

``scripts/test`` installs what they need (Node.js, ``npm ci``, Chromium) and builds the client
once; a test finds the build stale only when a source changed after it, and builds it again
(one worker at a time). Without Node's packages or Chromium a test is skipped with the reason,
which fails the run under CI (tests/conftest.py).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "client-web"
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
END_TO_END = sorted(p.name for p in (CLIENT / "e2e").glob("*.e2e.ts"))


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed (scripts/test installs Node.js)")
    if not (CLIENT / "node_modules" / ".bin" / "vitest").exists():
        pytest.skip("client-web/node_modules is missing: run npm --prefix client-web ci")
    return npm


def _run(args: list[str], timeout: float, screenshots: Path | None = None) -> None:
    env = dict(os.environ)
    if screenshots is not None:
        # docs/screenshots/ is refreshed by `npm --prefix client-web run e2e` on purpose;
        # a test run keeps its pictures out of the working tree.
        env.setdefault("SCREENSHOTS_DIR", str(screenshots))
    env.setdefault("CROUPIER", str(Path(sys.executable).with_name("croupier")))
    env["CI"] = "true"  # no watch mode, no colours
    env["NO_COLOR"] = "1"
    result = subprocess.run(
        args, cwd=CLIENT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    if result.returncode != 0:
        pytest.fail(f"{' '.join(args)} failed:\n{result.stdout[-20000:]}\n{result.stderr[-5000:]}")


def _stale(built: Path) -> bool:
    """Whether a source of the client is newer than its build (scripts/lib.sh's rule)."""
    if not built.exists():
        return True
    sources = [CLIENT / "index.html", *(CLIENT / "src").rglob("*"), *(CLIENT / "public").rglob("*")]
    return any(p.stat().st_mtime > built.stat().st_mtime for p in sources if p.is_file())


def _built(npm: str) -> None:
    """client-web/dist as the server serves it, built where it is missing or stale."""
    with (CLIENT / ".build-lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be building it
        if _stale(CLIENT / "dist" / "index.html"):
            _run([npm, "run", "build"], timeout=300)


def test_client_unit_tests() -> None:
    _run([_npm(), "run", "test"], timeout=300)


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("suite", END_TO_END)
def test_client_end_to_end_in_headless_chromium(suite: str, tmp_path: Path) -> None:
    npm = _npm()
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install -y chromium")
    croupier = Path(sys.executable).with_name("croupier")
    if not croupier.exists() and "CROUPIER" not in os.environ:
        pytest.skip(f"no croupier command at {croupier}")
    _built(npm)
    vitest = str(CLIENT / "node_modules" / ".bin" / "vitest")
    args = [vitest, "run", "--config", "vitest.e2e.config.ts", f"e2e/{suite}"]
    _run(args, timeout=850, screenshots=tmp_path)
