"""Extraction after a turn: the LLM reads the turn and proposes source-backed entries.

When an assistant answer closes a turn, the append queues one job for that turn; the job asks
the extraction model (seed 003 "Extract") and stores what passes the checks. Without an LLM
endpoint, or with `episodic_extraction_enabled` off, nothing is queued: there is no offline
fallback for judging what is worth remembering, and the console and GET /api/v1/config say so.

    jobs       when it runs: queued per closed turn after the append, run as a job
    turns      one turn: claim it, read it, ask the model, store what passes (idempotent by turn)
    proposals  the checks on what the model proposes (shape, source label, verbatim evidence)

Other apps import what this module exports.
"""

from apps.episodic.extraction.jobs import JOB_KIND, extraction_enqueue
from apps.episodic.extraction.turns import (
    ExtractionBusy,
    ExtractionState,
    extraction_state,
    turn_extract,
)

__all__ = [
    "JOB_KIND",
    "ExtractionBusy",
    "ExtractionState",
    "extraction_enqueue",
    "extraction_state",
    "turn_extract",
]
