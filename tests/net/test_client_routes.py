"""The client's pages are served from one index.html: the lobby, a table, a player
station's touchscreen and a table's main display — a station id may hold a dot — while a
missing file is a 404 (docs/electronic-tables.md)."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from pathlib import Path

from server.app.service import Service
from server.config import load_config


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""


def test_client_pages_and_missing_files(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text("<!doctype html><title>Croupier</title>")
    (dist / "assets" / "app.js").write_text("console.log(1)")

    async def check() -> dict[str, tuple[int, bytes]]:
        service = Service(load_config(None), tmp_path / "data", port=0, client_dist=dist)
        await service.start(stagger=False)
        try:
            base = f"http://127.0.0.1:{service.port}"
            paths = ["/", "/table/baccarat", "/station/st.1", "/station/s1", "/display/lucky-nines",
                     "/assets/app.js", "/assets/missing.js", "/favicon.ico"]  # fmt: skip
            answers = await asyncio.gather(*(asyncio.to_thread(_get, base + p) for p in paths))
            return dict(zip(paths, answers, strict=True))
        finally:
            await service.stop()

    got = asyncio.run(check())
    page = (dist / "index.html").read_bytes()
    for path in ("/", "/table/baccarat", "/station/st.1", "/station/s1", "/display/lucky-nines"):
        assert got[path] == (200, page), path
    assert got["/assets/app.js"] == (200, b"console.log(1)")
    assert got["/assets/missing.js"][0] == 404
    assert got["/favicon.ico"][0] == 404
