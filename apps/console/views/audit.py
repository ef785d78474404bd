"""Console page: the audit log of changes to memory, config and keys, newest first."""

from django import forms
from django.urls import path

from apps.audit.selectors import audit_actions, audit_event_changes, audit_pretty, audit_search
from apps.console.pages import paginate, query_without_page, render_page_or_fragment
from apps.console.roles import ADMIN, role_required
from apps.tenancy.selectors import project_list


class AuditFilterForm(forms.Form):
    action = forms.ChoiceField(required=False)
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
    form = AuditFilterForm(request.GET or None)
    filters = form.cleaned_data if form.is_bound and form.is_valid() else {}
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
            audit_event_changes(event=event),
            None if event.before is None else audit_pretty(event.before),
            None if event.after is None else audit_pretty(event.after),
        )
        for event in page
    ]
    context = {"form": form, "page": page, "rows": rows, "query": query_without_page(request)}
    return render_page_or_fragment(request, "console/audit/index.html", "audit-list", context)


urlpatterns = [path("audit/", index, name="audit")]
