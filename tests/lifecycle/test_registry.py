"""Every model whose rows forgetting deletes is registered, so its count has a name."""

from django.db.models import CASCADE

from apps.lifecycle.registry import KINDS


def _deleted_with(model, seen: set) -> set:
    """Return the labels of the models whose rows CASCADE deletes along with model's rows."""
    # Hidden relations too (related_name="+"), which _meta.related_objects leaves out.
    relations = [
        field
        for field in model._meta.get_fields(include_hidden=True)
        if field.auto_created and not field.concrete and (field.one_to_many or field.one_to_one)
    ]
    for relation in relations:
        if relation.on_delete is CASCADE and relation.related_model._meta.label not in seen:
            seen.add(relation.related_model._meta.label)
            _deleted_with(relation.related_model, seen)
    return seen


def test_every_model_deleted_by_forgetting_has_a_registered_kind():
    from django.apps import apps

    roots = {label for label, kind in KINDS.items() if kind.roots is not None}
    reached = set(roots)
    for label in roots:
        _deleted_with(apps.get_model(label), reached)

    unregistered = reached - set(KINDS)
    assert unregistered == set(), (
        f"register these in apps/lifecycle/kinds.py (kind_register): {sorted(unregistered)}"
    )


def test_kind_names_are_unique():
    names = [kind.name for kind in KINDS.values()]

    assert len(names) == len(set(names))
