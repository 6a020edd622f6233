"""The network edge: the only package that imports ``websockets``.

WebSocket connections on ``/ws`` (binary MessagePack frames, docs/protocol.md), and on the
same port plain HTTP for ``/healthz``, ``/readyz``, ``/metrics``, ``/devices`` and the
browser client (``edge.py``); each connection is served against the casino's floor
(``connection.py``). The composition root (``server.app``) gives the edge what it serves.
"""
