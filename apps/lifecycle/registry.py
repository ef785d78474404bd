"""The kinds of data forgetting an end user deletes, each counted under its own name.

A kind names the rows of one model. Some kinds are roots: forgetting deletes their rows in the
(agent, resource) scope directly. The others go with the rows they belong to (a thread's
messages, a run's checkpoints), through the foreign keys' CASCADE, and only need to be named
so that their count is reported under a name. A model added later joins with one call:

    kind_register("artifacts", "runstate.Artifact")  # deleted with its run
    kind_register("...", "app.Model", roots=lambda scope: Model.objects.filter(...))
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.db.models import QuerySet


@dataclass(frozen=True)
class Scope:
    """What is being forgotten: one end user (resource) of one agent, and their threads."""

    agent: object
    resource: object
    thread_ids: tuple


@dataclass(frozen=True)
class Kind:
    name: str  # the key of its count in the answer
    model: str  # "app_label.ModelName", as Django's delete() reports it
    roots: Callable[[Scope], QuerySet] | None = None


KINDS: dict[str, Kind] = {}
# The audit log names a changed row by (object_type, object_id); each object type whose rows
# forgetting deletes, with the scope's rows of that type, so their audit rows lose their words.
AUDITED: dict[str, Callable[[Scope], QuerySet]] = {}


def kind_register(name: str, model: str, roots: Callable[[Scope], QuerySet] | None = None) -> None:
    """Count the deleted rows of model under name; delete roots(scope) directly if given.

    Roots are deleted in the order they were registered.
    """
    KINDS[model] = Kind(name=name, model=model, roots=roots)


def kind_name(model_label: str) -> str:
    """Return the name a model's deleted rows are counted under (its label if unregistered)."""
    kind = KINDS.get(model_label)
    return kind.name if kind else model_label.lower()


def audited_register(object_type: str, rows: Callable[[Scope], QuerySet]) -> None:
    """Redact the audit rows of object_type about rows(scope) when the end user is forgotten."""
    AUDITED[object_type] = rows
