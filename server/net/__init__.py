"""The network edge: the only package that imports ``websockets``.

WebSocket connections on ``/ws`` (binary MessagePack frames, docs/protocol.md), and on the
same port plain HTTP for ``/healthz``, ``/readyz``, ``/metrics`` and the browser client.
"""
