"""The retry briefing of a task: what a sub-agent should know before trying it again."""

from apps.observations.selectors import observations_active
from apps.providers.tokens import count_tokens
from apps.runstate import selectors as runstate_selectors
from apps.search.query import query_terms

# A long summary or error is cut so that one attempt cannot crowd out the others.
ATTEMPT_FIELD_CHARS = 600


def briefing_build(*, thread, max_tokens: int, task: str | None = None) -> dict:
    """Return the text to append to a sub-agent's briefing on retry, within max_tokens.

    Without a task, the task of the thread's latest attempt is briefed.

    1. Every earlier attempt at the task, oldest first, with its outcome, summary and error;
       when they do not all fit, the newest that fit, and a line saying how many were left out.
    2. The plan's current step (the first in progress, else the first pending), if it fits.
    3. The thread's active observations that share a word with the task, in order, while
       they fit.
    The same rows always give the same text.
    """
    if task is None:
        latest = runstate_selectors.iteration_list(thread=thread).order_by("-id").first()
        task = latest.task if latest else ""
    attempts = list(runstate_selectors.iteration_list(thread=thread, task=task).order_by("attempt"))
    header = f'## Earlier attempts at "{task}"'
    lines = [_attempt_line(attempt) for attempt in attempts]
    kept = len(lines)
    while kept and count_tokens("\n".join([header, *lines[-kept:]])) > max_tokens:
        kept -= 1
    sections = [header] if kept else []
    if kept < len(lines):
        sections.append(f"({len(lines) - kept} earlier attempts left out for length.)")
    sections.extend(lines[len(lines) - kept :])
    used = count_tokens("\n".join(sections))

    step = _current_step(runstate_selectors.plan_get(thread=thread))
    step_included = None
    if step is not None:
        text = f"## Current plan step\n{step.get('title', '')} ({step.get('status', 'pending')})"
        if used + count_tokens(text) <= max_tokens:
            sections.append(text)
            used += count_tokens(text)
            step_included = step

    terms = set(query_terms(task))
    relevant = [
        observation
        for observation in observations_active(thread=thread)
        if terms & set(query_terms(observation.content))
    ]
    observation_ids = []
    for observation in relevant:
        heading = "" if observation_ids else "## Relevant observations\n"
        text = f"{heading}- {observation.content}"
        if used + count_tokens(text) > max_tokens:
            break
        sections.append(text)
        used += count_tokens(text)
        observation_ids.append(observation.id)

    text = "\n".join(sections)
    return {
        "thread_id": thread.id,
        "task": task,
        "max_tokens": max_tokens,
        "tokens": count_tokens(text),
        "text": text,
        "attempts": [attempt.id for attempt in attempts[len(attempts) - kept :]],
        "attempts_left_out": len(attempts) - kept,
        "plan_step": step_included,
        "observations": observation_ids,
    }


def _attempt_line(attempt) -> str:
    line = f"{attempt.attempt}. {attempt.outcome}"
    if attempt.summary:
        line += f": {_cut(attempt.summary)}"
    if attempt.error:
        line += f"\n   error: {_cut(attempt.error)}"
    return line


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= ATTEMPT_FIELD_CHARS else text[: ATTEMPT_FIELD_CHARS - 1] + "…"


def _current_step(plan) -> dict | None:
    if plan is None:
        return None
    steps = [step for step in plan.steps if isinstance(step, dict)]
    for status in ("in_progress", "pending"):
        for step in steps:
            if step.get("status", "pending") == status:
                return step
    return None
