"""Console pages: API keys of every agent; issue one (its secret shown once), revoke one."""

from django import forms
from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_POST

from apps.console.pages import (
    filter_problems,
    paginate,
    query_without_page,
    render_page_or_fragment,
)
from apps.console.roles import ADMIN, actor, role_required
from apps.tenancy.models import KeyScope
from apps.tenancy.selectors import agent_list, api_key_get, api_key_list, project_list
from apps.tenancy.services import api_key_issue, api_key_revoke

STATUSES = {"active": True, "revoked": False}


class KeyFilterForm(forms.Form):
    project = forms.ModelChoiceField(queryset=project_list(), required=False, empty_label="any")
    agent = forms.ModelChoiceField(queryset=agent_list(), required=False, empty_label="any")
    status = forms.ChoiceField(
        choices=[("", "any"), ("active", "active"), ("revoked", "revoked")], required=False
    )


class KeyCreateForm(forms.Form):
    agent = forms.ModelChoiceField(
        queryset=agent_list(),
        empty_label="choose an agent",
        error_messages={
            "required": "Choose the agent the key is for.",
            "invalid_choice": "That agent does not exist any more; choose one from the list.",
        },
    )
    name = forms.CharField(
        required=False, max_length=100, help_text="A label, e.g. where the key is used."
    )
    admin = forms.BooleanField(
        required=False,
        label="Project admin",
        help_text="May also change the project's memory settings and webhooks over the API.",
    )


@role_required(ADMIN)
def index(request):
    """GET lists keys; POST issues one and shows its secret in the answer, never stored."""
    issued = None
    create = KeyCreateForm(request.POST if request.method == "POST" else None)
    if create.is_bound and create.is_valid():
        issued = api_key_issue(
            agent=create.cleaned_data["agent"],
            name=create.cleaned_data["name"],
            actor=actor(request),
            scope=KeyScope.ADMIN if create.cleaned_data["admin"] else KeyScope.AGENT,
        )
        messages.success(request, f"Created {issued.api_key} for {issued.api_key.agent}.")
        create = KeyCreateForm()
    elif create.is_bound:
        messages.error(request, "No key was created; see the form.")
    context = {"create": create, "issued": issued, "has_agents": agent_list().exists()}
    if request.method == "POST" and request.htmx:
        response = render(request, "console/keys/key-create.html", context)
        if issued:
            response["HX-Trigger"] = "keys-changed"  # #key-list reloads itself
    else:
        # No redirect after a POST here: the secret exists only in this one answer.
        context.update(_list_context(request))
        status = 400 if context["problems"] else 200
        response = render_page_or_fragment(
            request, "console/keys/index.html", "key-list", context, status=status
        )
    if issued:
        patch_cache_control(response, no_store=True, private=True)
    return response


@role_required(ADMIN)
@require_POST
def revoke(request, key_id):
    """Revoke a key; answers #key-list with the filters and page carried in the query string."""
    api_key = api_key_get(key_id=key_id)
    if api_key is None:
        raise Http404("No such API key.")
    if api_key.is_active:
        api_key_revoke(api_key=api_key, actor=actor(request))
        messages.success(request, f"Revoked {api_key} of {api_key.agent}; calls with it get 401.")
    else:
        messages.info(request, f"{api_key} of {api_key.agent} was already revoked.")
    if not request.htmx:
        return redirect(f"{reverse('console:keys')}?{request.GET.urlencode()}")
    return render(request, "console/keys/key-list.html", _list_context(request))


def _list_context(request) -> dict:
    form = KeyFilterForm(request.GET or None, auto_id="filter_%s")  # beside the create form
    problems = filter_problems(form)
    query = query_without_page(request)
    if problems:  # told, and nothing listed: a filter that cannot match lists no key
        return {"filters": form, "problems": problems, "page": None, "query": query}
    filters = form.cleaned_data if form.is_bound else {}
    keys = api_key_list(
        project=filters.get("project"),
        agent=filters.get("agent"),
        active=STATUSES.get(filters.get("status") or ""),
    )
    return {"filters": form, "problems": [], "page": paginate(request, keys), "query": query}


urlpatterns = [
    path("keys/", index, name="keys"),
    path("keys/<uuid:key_id>/revoke/", revoke, name="key-revoke"),
]
