"""The moderation queue's filters: source, agent, resource, status, age and order.

An unknown value is named beside its field and filters nothing; the bulk decisions refuse to
run while any field is in error, so a typo never widens what they decide.
"""

from django import forms

from apps.episodic.approval import ORIGINS
from apps.episodic.models import EntryStatus
from apps.episodic.queue import AGE_LABELS, SORTS
from apps.tenancy.selectors import agent_list


def _unknown(name: str) -> dict:
    return {
        "invalid_choice": f"{name}: %(value)s is not one of the choices; pick one from the list."
    }


class EntryFilterForm(forms.Form):
    source = forms.ChoiceField(
        choices=[("", "any"), *((key, what) for key, (_, what) in ORIGINS.items())],
        required=False,
        error_messages=_unknown("source"),
    )
    agent = forms.ModelChoiceField(
        queryset=agent_list(),
        required=False,
        empty_label="any",
        error_messages={"invalid_choice": "agent: no such agent; pick one from the list."},
    )
    resource = forms.CharField(required=False, max_length=200, label="Resource id")
    status = forms.ChoiceField(
        choices=[("", "any"), *EntryStatus.choices],
        required=False,
        error_messages=_unknown("status"),
    )
    age = forms.ChoiceField(
        choices=[("", "any"), *AGE_LABELS.items()], required=False, error_messages=_unknown("age")
    )
    sort = forms.ChoiceField(
        choices=[(key, key.replace("-", " ")) for key in SORTS],
        required=False,
        label="Sort by",
        error_messages=_unknown("sort"),
    )


def filters_of(request) -> tuple[EntryFilterForm, dict]:
    """The filter form and the selector's arguments; no status parameter means pending. An
    invalid field shows its error and filters nothing; bulk actions refuse to run then."""
    data = request.GET.copy()
    data.setdefault("status", EntryStatus.PENDING)
    form = EntryFilterForm(data)
    form.is_valid()  # invalid fields drop out of cleaned_data and show their errors
    cleaned = form.cleaned_data
    agent = cleaned.get("agent")
    return form, {
        "agent_id": agent.id if agent else None,
        "resource": cleaned.get("resource", ""),
        "status": cleaned.get("status", EntryStatus.PENDING) or None,
        "origin": cleaned.get("source", ""),
        "age": cleaned.get("age", ""),
        "sort": cleaned.get("sort", "") or "newest",
    }
