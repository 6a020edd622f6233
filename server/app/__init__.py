"""The composition root: one ``croupier serve`` put together (``service.py``) — its stores,
its tables' games, devices and player stations, the cluster node if configured, and the
WebSocket and HTTP edge. The only package that knows every other (docs/architecture.md,
"Layers"); only the ``croupier`` command imports it."""
