"""The console's URL patterns, read from its URLconf, and real arguments for their converters."""

from django.urls import URLPattern, get_resolver, reverse

PUBLIC = {"login", "logout"}


def console_patterns() -> list[URLPattern]:
    """Every URL pattern of the console namespace, in URLconf order."""
    console = next(
        p for p in get_resolver().url_patterns if getattr(p, "namespace", None) == "console"
    )
    return [p for p in console.url_patterns if isinstance(p, URLPattern)]


def pattern_names(*, with_arguments: bool | None = None, public: bool = False) -> list[str]:
    """Names of the console's patterns, optionally only those that do (not) take arguments."""
    names = []
    for pattern in console_patterns():
        if pattern.name in PUBLIC and not public:
            continue
        takes = bool(pattern.pattern.regex.groupindex)
        if with_arguments is None or takes == with_arguments:
            names.append(pattern.name)
    return names


def required_roles(name: str) -> set[str]:
    pattern = next(p for p in console_patterns() if p.name == name)
    roles = getattr(pattern.callback, "required_roles", None)
    assert roles, f"console view {name} has no @role_required"
    return set(roles)


def console_url(name: str, objects: dict) -> str:
    """Reverse a console URL, filling each converter from objects (keyed by argument name)."""
    pattern = next(p for p in console_patterns() if p.name == name)
    arguments = list(pattern.pattern.regex.groupindex)
    missing = [argument for argument in arguments if argument not in objects]
    assert not missing, f"{name}: add an object for {missing} to the console_objects fixture"
    return reverse(f"console:{name}", kwargs={arg: objects[arg] for arg in arguments})
