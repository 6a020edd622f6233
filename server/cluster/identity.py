"""A node's name in the cluster, apart from the rest of the cluster so that a server that
is not part of one (the embedded default) can name itself without loading Redis."""

from __future__ import annotations

import os
import socket

__all__ = ["default_node_id"]


def default_node_id() -> str:
    """The host name and process id: unique among the nodes, readable in ``cluster status``."""
    return f"{socket.gethostname()}-{os.getpid()}"
