"""System checks of the provider settings (`manage.py check`, runserver, migrate)."""

from django.conf import settings
from django.core.checks import Error, register

from apps.providers.local_embedder import local_embedder_problem


@register()
def global_embedder_check(app_configs, **kwargs):
    """Refuse a MEMORY_EMBEDDER_MODEL of a local model this server has not, or one whose
    vectors are not of MEMORY_EMBEDDER_DIMENSIONS: every vector job would fail later."""
    defaults = settings.MEMORY_DEFAULTS
    problem = local_embedder_problem(defaults["embedder_model"], defaults["embedder_dimensions"])
    if problem is None:
        return []
    name, message = problem
    return [
        Error(
            f"MEMORY_{name.upper()}: {message}",
            hint="Change the variable, or leave MEMORY_EMBEDDER_MODEL empty for no vectors.",
            id="providers.E001",
        )
    ]
