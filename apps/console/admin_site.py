"""Django's admin, for staff only: the raw tables.

The console's admin role is not a way in. Its members manage projects, agents, API keys, config,
webhooks and the console roles of users from the console's own pages, none of which can set
`is_staff` or `is_superuser`; Django's admin could (its Users form shows both flags), so it keeps
Django's own rule: active staff members, with the model permissions Django grants them.
"""

from django.contrib.admin.apps import AdminConfig
from django.contrib.admin.sites import AdminSite


class ConsoleAdminSite(AdminSite):
    """Django's admin with the console's titles; who may enter is Django's rule (is_staff)."""

    site_header = "Memory Console administration"
    site_title = "Memory Console admin"
    index_title = "Raw tables"


class ConsoleAdminConfig(AdminConfig):
    """django.contrib.admin with ConsoleAdminSite as admin.site."""

    default_site = "apps.console.admin_site.ConsoleAdminSite"
