"""Console page: users and their console roles, for the admin role.

The admin role manages who holds which console role here. Django's staff and superuser flags are
shown, never editable: they are set with `manage.py createsuperuser` or by a superuser in Django's
admin, which only staff may open (apps/console/admin_site.py).
"""

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_POST

from apps.console.pages import paginate, query_without_page
from apps.console.roles import ADMIN, ROLES, actor, role_required
from apps.console.users import console_users, user_role_names, user_roles_set

ROLE_HELP = {
    "operator": "threads, contexts, jobs, evaluation, webhooks, notes",
    "curator": "knowledge bases",
    "moderator": "episodic entries, notes",
    "admin": "every page above, and projects, agents, API keys, config, audit log, users' roles",
}


class RolesForm(forms.Form):
    """The roles of one user: the only field this page reads from a request."""

    roles = forms.MultipleChoiceField(
        choices=[(role, role) for role in ROLES],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        error_messages={"invalid_choice": "roles: %(value)s is not a console role."},
    )


@role_required(ADMIN)
def index(request):
    """Every user, their Django flags (read-only) and their console roles (a form each)."""
    page = paginate(request, console_users())
    for user in page:
        user.role_names = user_role_names(user)
    context = {
        "page": page,
        "query": query_without_page(request),
        "roles": [(role, ROLE_HELP[role]) for role in ROLES],
    }
    return render(request, "console/users/index.html", context)


@role_required(ADMIN)
@require_POST
def roles(request, user_id):
    """Set a user's console roles; is_staff, is_superuser or anything else posted is ignored."""
    user = get_user_model().objects.filter(pk=user_id).first()
    if user is None:
        raise Http404("No such user.")
    form = RolesForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(form.errors["roles"]))
        return redirect("console:users")
    chosen = form.cleaned_data["roles"]
    if user.pk == request.user.pk and ADMIN in user_role_names(user) and ADMIN not in chosen:
        messages.error(
            request,
            "You cannot take the admin role from yourself: another admin must, so that the "
            "console always keeps one.",
        )
        return redirect("console:users")
    name = user.get_username()
    if user_roles_set(user=user, roles=chosen, actor=actor(request)):
        messages.success(request, f"{name} now has the roles: {', '.join(chosen) or 'none'}.")
    else:
        messages.info(request, f"{name}'s roles were already these; nothing changed.")
    return redirect("console:users")


urlpatterns = [
    path("users/", index, name="users"),
    path("users/<int:user_id>/roles/", roles, name="user-roles"),
]
