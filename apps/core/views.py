from django.http import JsonResponse
from django.views.decorators.http import require_GET

from apps.core.health import broker_status, database_status


@require_GET
def healthz(request):
    """Answer 200 when the database works; the broker's state is reported, not required."""
    database, broker = database_status(), broker_status()
    healthy = database == "ok" and broker in {"ok", "not configured"}
    return JsonResponse(
        {"status": "ok" if healthy else "degraded", "database": database, "broker": broker},
        status=200 if database == "ok" else 503,
    )
