"""Helpers shared by console views: pagination and fragment rendering."""

from django.core.paginator import Paginator
from django.shortcuts import render

PAGE_SIZE = 25


def paginate(request, queryset, per_page: int = PAGE_SIZE):
    """Return the requested page (?page=N; out-of-range numbers give the nearest page)."""
    return Paginator(queryset, per_page).get_page(request.GET.get("page"))


def query_without_page(request) -> str:
    """Return the request's query string without ?page=, for the pagination links to carry."""
    params = request.GET.copy()
    params.pop("page", None)
    return params.urlencode()


def render_page_or_fragment(request, template: str, fragment: str, context: dict, **kwargs):
    """Render the whole page, or only its fragment when htmx asks for that fragment's DOM id.

    Fragment templates are named after the DOM id of their root element.
    """
    target = request.headers.get("HX-Target", "")
    if getattr(request, "htmx", False) and target == fragment:
        return render(request, f"{template.rsplit('/', 1)[0]}/{fragment}.html", context, **kwargs)
    return render(request, template, context, **kwargs)


def filter_problems(form) -> list[str]:
    """What is wrong with a bound filter form, one line per bad parameter, naming it:
    a page told of an unknown ?action= says so instead of listing everything."""
    if not form.is_bound or form.is_valid():
        return []
    return [
        f"{name}={form.data.get(name, '')!s}: {error}"
        for name, errors in form.errors.items()
        for error in errors
    ]
