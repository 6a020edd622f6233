"""Events, wagers and coups are frozen value objects (docs/architecture.md, principle 4),
untracked by the cyclic garbage collector as their modules document.

Checked on the classes as imported, not on their source: a build that loses the class
keywords (``frozen=True, gc=False``) still imports and plays, but its events are mutable and
unhashable. mypyc does exactly that to classes defined in a module it compiles (it does not
pass class keywords on, python/mypy#21938), so no module defining one may be compiled.
"""

import importlib
import pkgutil

import msgspec
import pytest

import server.games


def _structs() -> list[type[msgspec.Struct]]:
    found: dict[str, type[msgspec.Struct]] = {}
    for info in pkgutil.walk_packages(server.games.__path__, "server.games."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, msgspec.Struct)
                and value.__module__ == info.name
            ):
                found[f"{info.name}.{value.__qualname__}"] = value
    return [found[name] for name in sorted(found)]


STRUCTS = _structs()


def test_the_value_objects_are_found() -> None:
    names = {cls.__name__ for cls in STRUCTS}
    assert {"Wager", "Settlement", "Outcome", "Coup", "Decision", "CardDealt"} <= names


@pytest.mark.parametrize("cls", STRUCTS, ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}")
def test_frozen_and_untracked(cls: type[msgspec.Struct]) -> None:
    config = cls.__struct_config__
    assert config.frozen, "a value object must be frozen (and so hashable)"
    assert not config.gc, "documented as gc=False: untracked by the cyclic GC"
