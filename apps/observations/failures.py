"""Record what a model got wrong, and what was kept instead, where operators see it."""

from apps.observations.models import ObservationFailure


def failure_record(
    *, thread, stage, generation, first_seq, last_seq, model, prompt_version, error, outcome
):
    """Keep a model's failure where operators see it (admin, thread page); return the row."""
    return ObservationFailure.objects.create(  # one row: no transaction needed around it
        thread=thread,
        stage=stage,
        generation=generation,
        first_seq=first_seq,
        last_seq=last_seq,
        model=model[:200],
        prompt_version=prompt_version[:50],  # consolidation's names its three prompts
        error=str(error)[:2000],
        outcome=outcome[:200],
    )


def failure_reported(
    sender, *, thread, stage, first_seq, last_seq, model, prompt_version, error, outcome, **kwargs
):
    """Record a failure another memory app reported (apps.providers.failures)."""
    failure_record(
        thread=thread,
        stage=stage,
        generation=0,
        first_seq=first_seq,
        last_seq=last_seq,
        model=model,
        prompt_version=prompt_version,
        error=error,
        outcome=outcome,
    )
