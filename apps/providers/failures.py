"""Tell whoever records memory failures that a model's answer was not used, and why.

The apps that call models for memory (observations, episodic) sit side by side and may not
import each other; the one that keeps the failures where operators see them (observations'
"Memory failures" on the thread page) connects a receiver from its AppConfig.ready().
"""

from django.dispatch import Signal

# Sent with thread=, stage= ("consolidation", "extraction", …), first_seq=, last_seq=, model=,
# prompt_version=, error= (the reason) and outcome= (what was kept instead).
model_answer_failed = Signal()


def model_failure_report(
    *, thread, stage, first_seq, last_seq, model, prompt_version, error, outcome
) -> None:
    """Report a model failure of a memory path; the receivers record it."""
    model_answer_failed.send(
        sender=stage,
        thread=thread,
        stage=stage,
        first_seq=first_seq,
        last_seq=last_seq,
        model=model,
        prompt_version=prompt_version,
        error=str(error),
        outcome=outcome,
    )
