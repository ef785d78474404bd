"""Console pages: the projects' action webhooks (`[[NAME: argument]]` → a URL) and secrets.

Operators and admins list, add, change and delete a project's webhooks, and see or rotate the
secret that signs its deliveries; every change is audited. A webhook's address must pass the
outbound guard of URL ingestion when it is saved, so a refused address is a form error here
rather than a failed delivery later (each delivery checks it again).
"""

from django import forms
from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_POST

from apps.actions.models import ActionWebhook
from apps.actions.selectors import secret_of, webhook_get, webhook_list
from apps.actions.services import (
    action_secret_rotate,
    webhook_address_problem,
    webhook_delete,
    webhook_save,
)
from apps.console.roles import OPERATOR, actor, role_required
from apps.core.errors import ApplicationError
from apps.tenancy.selectors import project_list


class ProjectFilterForm(forms.Form):
    project = forms.ModelChoiceField(queryset=project_list(), required=False, empty_label="any")


class WebhookForm(forms.ModelForm):
    class Meta:
        model = ActionWebhook
        fields = ["project", "name", "url", "active"]
        error_messages = {"project": {"required": "Choose the project the webhook is for."}}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["project"].queryset = project_list()
        if not self.instance._state.adding:  # a webhook stays in its project
            self.fields["project"].disabled = True

    def clean_url(self):
        url = self.cleaned_data["url"].strip()
        problem = webhook_address_problem(url)
        if problem:
            raise forms.ValidationError(problem)
        return url


@role_required(OPERATOR)
def index(request):
    """GET lists the webhooks (of one project with ?project=); POST adds one."""
    form = WebhookForm(request.POST if request.method == "POST" else None)
    if form.is_bound and form.is_valid() and (webhook := _saved(request, form)):
        messages.success(request, f"Added [[{webhook.name}: …]] → {webhook.url}.")
        return redirect(f"{reverse('console:webhooks')}?project={webhook.project_id}")
    if form.is_bound:
        messages.error(request, "No webhook was added; see the form.")
    filters = ProjectFilterForm(request.GET or None, auto_id="filter_%s")  # beside the add form
    project = filters.cleaned_data["project"] if filters.is_valid() else None
    if project is not None and not form.is_bound:
        form = WebhookForm(initial={"project": project})
    context = {
        "form": form,
        "filters": filters,
        "project": project,
        "secret": secret_of(project_id=project.id) if project else None,
        "webhooks": webhook_list(project=project),
    }
    response = render(request, "console/webhooks/index.html", context)
    patch_cache_control(response, no_store=True, private=True)  # it may show a secret
    return response


@role_required(OPERATOR)
def edit(request, webhook_id):
    """GET shows a webhook's form; POST saves the change."""
    webhook = _webhook(webhook_id)
    form = WebhookForm(request.POST if request.method == "POST" else None, instance=webhook)
    if form.is_bound and form.is_valid() and _saved(request, form):
        messages.success(request, f"Saved [[{webhook.name}: …]] → {webhook.url}.")
        return redirect(f"{reverse('console:webhooks')}?project={webhook.project_id}")
    if form.is_bound:
        messages.error(request, "The webhook was not changed; see the form.")
    return render(request, "console/webhooks/edit.html", {"form": form, "webhook": webhook})


def _saved(request, form: WebhookForm) -> ActionWebhook | None:
    """Save the form's webhook; None, with the reason on the form, if the service refused it
    (another webhook of the name saved since the form was checked, or this one deleted)."""
    try:
        return webhook_save(webhook=form.save(commit=False), actor=actor(request))
    except ApplicationError as error:
        name, _, message = error.message.partition(": ")
        if name in form.fields:
            form.add_error(name, message)
        else:
            form.add_error(None, error.message)
        return None


@role_required(OPERATOR)
@require_POST
def delete(request, webhook_id):
    webhook = _webhook(webhook_id)
    webhook_delete(webhook=webhook, actor=actor(request))
    messages.success(request, f"Deleted [[{webhook.name}: …]]; such actions are only recorded.")
    return redirect(f"{reverse('console:webhooks')}?project={webhook.project_id}")


@role_required(OPERATOR)
@require_POST
def rotate_secret(request, project_id):
    project = project_list().filter(pk=project_id).first()
    if project is None:
        raise Http404("No such project.")
    action_secret_rotate(project_id=project.id, actor=actor(request))
    messages.success(
        request, f"Rotated the signing secret of {project.slug}; receivers need the new one."
    )
    return redirect(f"{reverse('console:webhooks')}?project={project.id}")


def _webhook(webhook_id) -> ActionWebhook:
    webhook = webhook_get(webhook_id=webhook_id)
    if webhook is None:
        raise Http404("No such webhook.")
    return webhook


urlpatterns = [
    path("webhooks/", index, name="webhooks"),
    path("webhooks/<uuid:webhook_id>/", edit, name="webhook-edit"),
    path("webhooks/<uuid:webhook_id>/delete/", delete, name="webhook-delete"),
    path("webhooks/secret/<uuid:project_id>/rotate/", rotate_secret, name="webhook-secret-rotate"),
]
