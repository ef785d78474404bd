"""Hippo consolidation: messages that left the short-term window become consolidated entries.

A thread's messages older than its last `short_term_limit` are judged in batches, in seq order:
with a chat model, `is_useful` → `rewrite_memory` → `create_memory` (three prompts); without one,
or when the model fails, the extractive rules of the fallback. What is kept is stored through
entry_create (hash and similarity dedupe, approval as config says) as entries of kind
`consolidated`, with the thread and the batch's first and last seq as provenance.

    jobs        when it runs: the scheduled sweep, the per-thread job, a run on demand
    batches     one thread, batch by batch: judge, then claim the range and store atomically
    model       the judgment with a chat model (the three prompts)
    extractive  the judgment without one: fallback (a message), rules (a sentence),
                dedupe (repeats within a batch and of the scope's entries)
    answers     reading the model's answers
    selectors   how far a thread is consolidated, for the console

Other apps import what this module exports. The beat schedule names the sweep by its module:
`apps.episodic.consolidation.jobs.consolidation_sweep` (Celery's name for the task, too).
"""

from apps.episodic.consolidation.batches import ThreadReport, thread_consolidate
from apps.episodic.consolidation.jobs import (
    JOB_KIND,
    consolidation_enqueue_due,
    thread_consolidate_now,
)
from apps.episodic.consolidation.selectors import ConsolidationState, consolidation_state

__all__ = [
    "JOB_KIND",
    "ConsolidationState",
    "ThreadReport",
    "consolidation_enqueue_due",
    "consolidation_state",
    "thread_consolidate",
    "thread_consolidate_now",
]
