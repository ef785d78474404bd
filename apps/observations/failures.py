"""Record what a model got wrong, and what was kept instead, where operators see it."""

from apps.observations.models import ObservationFailure


def failure_record(
    *, thread, stage, generation, first_seq, last_seq, model, prompt_version, error, outcome
):
    """Keep a model's failure where operators see it (admin, thread page); return the row."""
    return ObservationFailure.objects.create(
        thread=thread,
        stage=stage,
        generation=generation,
        first_seq=first_seq,
        last_seq=last_seq,
        model=model,
        prompt_version=prompt_version,
        error=str(error)[:2000],
        outcome=outcome,
    )
