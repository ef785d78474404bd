from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

from apps.core.views import healthz

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="console:dashboard", permanent=False)),
    path("console/", include("apps.console.urls")),
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/", include("apps.api.urls")),
]

handler404 = "apps.core.errors.not_found"
handler500 = "apps.core.errors.server_error"
