"""The browser client's own tests, run from pytest: the Vitest codec tests and the end-to-end
suite (a real ``croupier serve`` driven by Debian's headless Chromium through playwright-core).

Skipped, with the reason, when Node's packages are not installed (``npm --prefix client-web
ci``) or there is no Chromium at ``/usr/bin/chromium`` (``apt-get install -y chromium``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "client-web"
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed")
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


def test_client_unit_tests() -> None:
    _run([_npm(), "run", "test"], timeout=300)


def test_client_end_to_end_in_headless_chromium(tmp_path: Path) -> None:
    npm = _npm()
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install -y chromium")
    croupier = Path(sys.executable).with_name("croupier")
    if not croupier.exists() and "CROUPIER" not in os.environ:
        pytest.skip(f"no croupier command at {croupier}")
    _run([npm, "run", "e2e"], timeout=600, screenshots=tmp_path)
