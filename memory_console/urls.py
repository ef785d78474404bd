from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

from apps.agenttools.mcp_endpoint import mcp_view
from apps.core.metrics import collector_register, metrics
from apps.core.views import healthz
from apps.jobs.metrics import JobQueueCollector

collector_register(JobQueueCollector())

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="console:dashboard", permanent=False)),
    path("console/", include("apps.console.urls")),
    path("healthz", healthz, name="healthz"),
    path("metrics", metrics, name="metrics"),
    path("admin/", admin.site.urls),
    path("api/", include("apps.api.urls")),
    # MCP (Streamable HTTP, stateless): a Django view, so every server that serves Django
    # serves it too; apps/agenttools/mcp_endpoint.py says why.
    path("mcp", mcp_view, name="mcp"),
    # The same endpoint: clients configured with a trailing slash got Django's HTML 404, which
    # an MCP client cannot read (a redirect would lose a POST's body in some clients).
    path("mcp/", mcp_view, name="mcp-slash"),
]

handler404 = "apps.core.errors.not_found"
handler500 = "apps.core.errors.server_error"
