"""Which threads call a method: a test's check that a read stays off the event loop."""

from __future__ import annotations

import threading
from typing import Any


def threads_calling(obj: Any, name: str) -> list[threading.Thread]:
    """Replace ``obj.name`` with a wrapper that notes the calling thread, then calls the
    original; the list the threads are noted in, in call order."""
    original = getattr(obj, name)
    seen: list[threading.Thread] = []

    def noted(*args: Any, **kwargs: Any) -> Any:
        seen.append(threading.current_thread())
        return original(*args, **kwargs)

    setattr(obj, name, noted)
    return seen
