"""The table core: one table as a sans-I/O state machine (``TableCore``), the commands it
takes and the effects it gives (docs/architecture.md, "The table core")."""

from server.tables.core.table import SEQ_BLOCK, Replayed, TableCore, replay_round

__all__ = ["SEQ_BLOCK", "Replayed", "TableCore", "replay_round"]
