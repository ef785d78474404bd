from django.test import override_settings


def test_healthz_reports_the_database_without_auth(client, db):
    response = client.get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "broker": "not configured"}


@override_settings(CELERY_BROKER_URL="redis://127.0.0.1:6379/15")
def test_healthz_reports_a_reachable_broker(client, db):
    assert client.get("/healthz").json()["broker"] == "ok"


@override_settings(CELERY_BROKER_URL="redis://127.0.0.1:1/0")
def test_healthz_reports_an_unreachable_broker_as_degraded(client, db):
    body = client.get("/healthz").json()

    assert body["status"] == "degraded"
    assert body["broker"].startswith("error")
