"""Console page: the audit log of changes to memory, config and keys, newest first."""

from dataclasses import dataclass

from django import forms
from django.urls import path

from apps.audit.selectors import audit_actions, audit_event_changes, audit_pretty, audit_search
from apps.console.pages import (
    filter_problems,
    paginate,
    query_without_page,
    render_page_or_fragment,
)
from apps.console.roles import ADMIN, role_required
from apps.tenancy.selectors import project_list


class AuditFilterForm(forms.Form):
    action = forms.ChoiceField(
        required=False,
        error_messages={
            "invalid_choice": "no event has the action %(value)s; choose one from the list."
        },
    )
    actor = forms.CharField(
        required=False,
        max_length=200,
        widget=forms.TextInput(attrs={"placeholder": "e.g. user:ana or agent:acme"}),
    )
    project = forms.ModelChoiceField(queryset=project_list(), required=False, empty_label="any")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["action"].choices = [("", "any")] + [(a, a) for a in audit_actions()]


@role_required(ADMIN)
def index(request):
    """The events, newest first; a filter value that matches nothing known is a 400 saying so."""
    form = AuditFilterForm(request.GET or None)
    problems = filter_problems(form)
    context = {"form": form, "problems": problems, "query": query_without_page(request)}
    if problems:
        context.update(page=None, rows=[])
        return render_page_or_fragment(
            request, "console/audit/index.html", "audit-list", context, status=400
        )
    filters = form.cleaned_data if form.is_bound else {}
    project = filters.get("project")
    events = audit_search(
        action=filters.get("action") or None,
        actor=filters.get("actor") or None,
        project_id=project.id if project else None,
    )
    page = paginate(request, events)
    rows = [
        (
            event,
            [diff_parts(change) for change in audit_event_changes(event=event)],
            None if event.before is None else audit_pretty(event.before),
            None if event.after is None else audit_pretty(event.after),
        )
        for event in page
    ]
    context.update(page=page, rows=rows)
    return render_page_or_fragment(request, "console/audit/index.html", "audit-list", context)


@dataclass(frozen=True)
class ShownChange:
    """One changed field as the log shows it (words empty: the plain "old → new" form)."""

    key: str
    before: str
    after: str
    words: list


def diff_parts(change) -> ShownChange:
    """A change as the log shows it: "old → new" for a replaced value; for a text with words
    kept, its words with "→" between each removed run and the run that replaced it."""
    words = change.words
    if not any(op == "same" for op, _ in words):
        return ShownChange(change.key, change.before, change.after, [])
    parts = []
    for index, (op, text) in enumerate(words):
        parts.append((op, text))
        following = words[index + 1][0] if index + 1 < len(words) else None
        if op == "del" and following == "ins":
            parts.append(("arrow", " → "))
    return ShownChange(change.key, change.before, change.after, parts)


urlpatterns = [path("audit/", index, name="audit")]
