"""The table runtime: one asyncio task per table owns its engine and serialises its input.

It answers the engine's chance requests from ``rng`` (journaling every card and wheel result
before it is revealed), runs the betting window and decision deadlines from an injected
clock, moves money through the ledger, and fans events out to viewers through per-viewer
views.
"""
