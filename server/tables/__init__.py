"""The table runtime: one asyncio task per table performs what its sans-I/O core
(``server.core``) says, in order — writes awaited on the stores' writer threads, chance
answered from ``rng`` or the table's devices (every card and wheel result journaled before
it is revealed), deadlines from an injected clock, events encoded once and handed to the
fan-out. Each runtime is given its hooks at construction (``hooks.py``); the casino runs
every table of the process; the floor is what a player's connection meets. Nothing here
chooses a store, a device or a cluster: the composition root (``server.app``) does.
"""
