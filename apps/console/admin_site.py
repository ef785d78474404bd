"""The Django admin for members of the console's admin role, who need not be Django staff.

INSTALLED_APPS names ConsoleAdminConfig, so Django imports this module while it fills the app
registry, before any model can be imported: whatever reaches the user model (the console roles,
the auth forms) is imported inside the function that needs it.
"""

from functools import cache

from django.contrib.admin.apps import AdminConfig
from django.contrib.admin.sites import AdminSite


def is_console_admin(user) -> bool:
    """Return whether user is an active member of the console's admin role (or a superuser)."""
    from apps.console.roles import ADMIN, user_roles

    return ADMIN in user_roles(user)


class ConsoleAdminSite(AdminSite):
    """Django's admin, open to staff as usual and to the console's admins."""

    site_header = "Memory Console administration"
    site_title = "Memory Console admin"
    index_title = "Raw tables"

    def has_permission(self, request):
        return super().has_permission(request) or is_console_admin(request.user)

    @property
    def login_form(self):
        return _login_form()


@cache
def _login_form():
    from django.contrib.admin.forms import AdminAuthenticationForm

    class ConsoleAdminAuthenticationForm(AdminAuthenticationForm):
        """Django's admin login, which would turn away a console admin for not being staff."""

        def confirm_login_allowed(self, user):
            if not is_console_admin(user):
                super().confirm_login_allowed(user)

    return ConsoleAdminAuthenticationForm


class ConsoleAdminConfig(AdminConfig):
    """django.contrib.admin with ConsoleAdminSite as admin.site."""

    default_site = "apps.console.admin_site.ConsoleAdminSite"


class AdminRoleBackend:
    """Grant every model permission to the console's admins, so they manage users and raw tables.

    It authenticates nobody (ModelBackend checks passwords); it only answers permission checks.
    """

    def authenticate(self, request, **credentials):
        return None

    def get_user(self, user_id):
        return None

    def has_perm(self, user_obj, perm, obj=None):
        return is_console_admin(user_obj)

    def has_module_perms(self, user_obj, app_label):
        return is_console_admin(user_obj)
