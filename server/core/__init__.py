"""The table core: one table as a sans-I/O state machine (``TableCore``), the commands it
takes and the effects it gives (docs/architecture.md, "The table core")."""

from server.core.rounds import Replayed, replay_round
from server.core.table import SEQ_BLOCK, TableCore

__all__ = ["SEQ_BLOCK", "Replayed", "TableCore", "replay_round"]
