"""A package's public names, loaded when first used (PEP 562).

A package ``__init__`` that imported its modules eagerly would load everything they import
for any caller of one light module: importing the journal's record types would open SQLite's
module and a writer thread's, importing a ledger type the same — and the sans-I/O table core,
which needs only those types, would no longer be free of I/O modules (docs/architecture.md,
"Import direction"; a test imports the core in a fresh interpreter to prove it). So a package
lists where each public name lives and lets this module import it on first use."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy"]


def lazy(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: each name in ``homes`` is imported from the module
    it names when first asked for, then kept in the package's namespace."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(home), name)
        setattr(import_module(package), name, value)
        return value

    return __getattr__
