"""Console users and their roles: what the admin role may change about a user, and nothing more.

A role is a Django group among roles.ROLES. Setting a user's roles touches only those groups:
`is_staff`, `is_superuser`, other groups and permissions are never read from a request here, so
no form of the console can grant Django's admin or a superuser's powers.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from apps.audit.services import audit_record
from apps.console.roles import ROLES


def console_users():
    """Every user with their groups, by username."""
    return get_user_model().objects.order_by("username").prefetch_related("groups")


def user_role_names(user) -> list[str]:
    """The console roles a user holds as groups (a superuser's implicit ones are not listed)."""
    held = {group.name for group in user.groups.all()}
    return [role for role in ROLES if role in held]


@transaction.atomic
def user_roles_set(*, user, roles: list[str], actor: str) -> bool:
    """Give user exactly these console roles; return whether anything changed.

    Only the console's groups are added or removed; the user's other groups stay.
    """
    unknown = set(roles) - set(ROLES)
    if unknown:
        raise ValueError(f"unknown roles: {', '.join(sorted(unknown))}")
    before = user_role_names(user)
    after = [role for role in ROLES if role in roles]
    if before == after:
        return False
    groups = {group.name: group for group in Group.objects.filter(name__in=ROLES)}
    missing = [name for name in ROLES if name not in groups]
    for name in missing:  # the roles migration made them; a flushed database may not have
        groups[name] = Group.objects.create(name=name)
    user.groups.remove(*[groups[name] for name in before if name not in after])
    user.groups.add(*[groups[name] for name in after if name not in before])
    user.__dict__.pop("_console_roles", None)
    audit_record(
        actor=actor,
        action="user.roles",
        object_type="user",
        object_id=user.pk,
        summary=f"roles of {user.get_username()}: {', '.join(after) or 'none'}",
        before={"roles": before},
        after={"roles": after},
    )
    return True
