"""Electronic-table devices: the framed link they speak (``frames``, ``link``), sans-I/O.

docs/devices.md is the contract.
"""
