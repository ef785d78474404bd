"""Console roles are Django groups. Each page names the roles that may open it."""

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.shortcuts import render

OPERATOR = "operator"  # threads, context, jobs, evaluation
CURATOR = "curator"  # knowledge bases
MODERATOR = "moderator"  # episodic entries
# Projects and agents, API keys, memory config, webhooks, the audit log and users' console roles
# (never Django's staff or superuser flags); and every page of the roles above.
ADMIN = "admin"
ROLES = (OPERATOR, CURATOR, MODERATOR, ADMIN)


def user_roles(user) -> set[str]:
    """Return the roles of a user; a superuser and an admin hold all of them."""
    if user is None or not user.is_authenticated or not user.is_active:
        return set()
    if user.is_superuser:
        return set(ROLES)
    if not hasattr(user, "_console_roles"):
        groups = set(user.groups.filter(name__in=ROLES).values_list("name", flat=True))
        user._console_roles = set(ROLES) if ADMIN in groups else groups
    return user._console_roles


def role_required(*roles: str):
    """Let a view through for users with any of roles; others get the login page or a 403."""

    def decorate(view):
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not user_roles(request.user) & set(roles):
                return forbidden(request, f"This page needs the role {' or '.join(roles)}.")
            return view(request, *args, **kwargs)

        wrapped.required_roles = roles
        return wrapped

    return decorate


def forbidden(request, reason: str):
    """The 403 page, answered rather than raised: Django logs a raised PermissionDenied with its
    traceback, as if the server had failed; an answered 403 is logged as one line."""
    return render(request, "403.html", {"exception": reason}, status=403)


def actor(request) -> str:
    """How the audit log names a console user."""
    return f"user:{request.user.get_username()}"


def roles_context(request) -> dict:
    """Template context: the user's roles, for the navigation."""
    return {"console_roles": user_roles(getattr(request, "user", None))}
