"""htmx habits, in one middleware: Vary on HX-Request, flash messages sent out of band with
htmx answers, and redirects turned into HX-Location so htmx follows them itself (to the login
form, a whole page that leads back to the page the user was on)."""

from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.contrib.messages import get_messages
from django.http import HttpResponse
from django.shortcuts import resolve_url
from django.template.loader import render_to_string
from django.utils.cache import patch_vary_headers


def _login_for_page(request, location: str) -> str | None:
    """For a redirect to the login form, the login form's URL that leads back to the page the
    browser shows, or None for any other redirect.

    login_required sends an htmx request whose session ended to the login form with next= the
    request's own URL: a fragment ("load earlier messages"), which the browser then opened
    alone, unstyled, once the user had logged in again.
    """
    login = resolve_url(settings.LOGIN_URL)
    page = request.htmx.current_url_abs_path
    if urlsplit(location).path != login or not page:
        return None
    return f"{login}?{urlencode({'next': page})}"


class HtmxConsoleMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if not request.path.startswith("/console/"):
            return response
        patch_vary_headers(response, ("HX-Request",))
        if not getattr(request, "htmx", False):
            return response
        if 300 <= response.status_code < 400 and response.has_header("Location"):
            location = HttpResponse(status=204)
            login = _login_for_page(request, response["Location"])
            if login is not None:
                location["HX-Redirect"] = login  # a whole page: the login form
            else:
                location["HX-Location"] = response["Location"]
            patch_vary_headers(location, ("HX-Request",))
            return location
        if response.get("Content-Type", "").startswith("text/html") and not response.streaming:
            # An action (any method but GET) always sends the region, even empty, so the
            # messages of an earlier action are replaced by its own. A GET (a status poll,
            # a filter) sends it only with new messages: a poll must not wipe a message the
            # user has not dismissed yet ("Stored 1 file; ingesting now.").
            messages = list(get_messages(request))
            if not messages and request.method == "GET":
                return response
            response.content += render_to_string(
                "console/_messages.html", {"messages": messages, "oob": True}, request
            ).encode()
        return response
