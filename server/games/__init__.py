"""Pure rule engines: sans-I/O state machines, commands in, events out.

Nothing in this package imports asyncio, sockets, time, random, json or redis (a test
enforces it): randomness arrives as the answer to a chance request, time as a command from
the table runtime. See docs/architecture.md.
"""
