"""The config page's details: when each change takes effect, selects for enumerated settings."""

import re

import pytest
from django.test import override_settings

from apps.console.config_effect import EFFECTS
from apps.memconfig.schema import SETTINGS
from apps.memconfig.selectors import config_effective

HTMX = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "config-level"}


@pytest.fixture
def admin(as_role):
    return as_role("admin", username="ana")


def test_every_setting_says_when_its_change_takes_effect():
    assert set(EFFECTS) == {setting.key for setting in SETTINGS}


@override_settings(HOT_CACHE_SECONDS=7)
@pytest.mark.parametrize("level", ["", "acme", "acme/alice"])
def test_each_row_says_when_a_change_takes_effect(admin, alice, level):
    body = admin.get("/console/config/", {"level": level} if level else {}).content.decode()

    effects = re.findall(r'<div class="small effect">.*?</div>', body, re.S)
    assert len(effects) == len(SETTINGS)
    assert all("in other processes within 7 s" in effect for effect in effects)
    assert "re-embeds the whole project in the background" in body  # the embedder's row
    assert "next consolidation sweep" in body


def test_context_strategy_is_a_select_of_the_schema_s_choices(admin, alice):
    body = admin.get("/console/config/", {"level": "acme"}).content.decode()

    select = re.search(r'<select name="context_strategy".*?</select>', body, re.S).group(0)
    options = re.findall(r'<option value="([^"]*)"', select)
    assert options == ["", "observational", "compaction", "none"]
    assert "inherit: observational (default)" in select


def test_a_chosen_strategy_is_saved_and_acts(admin, alice):
    response = admin.post(
        "/console/config/?level=acme",
        {"level": "acme", "expected_version": 0, "context_strategy": "compaction"},
        **HTMX,
    )

    assert response.status_code == 200
    assert config_effective(agent=alice.agent)["context_strategy"] == "compaction"
    # The thread page of one of its threads now shows the compaction gauge.
    thread = alice.new_thread()
    alice.append(thread["id"], {"role": "user", "content": "hello"})
    from django.contrib.auth.models import User

    admin_user = User.objects.get(username="ana")
    from django.test import Client

    client = Client()
    client.force_login(admin_user)
    assert (
        "Thread, summary included"
        in client.get(f"/console/threads/{thread['id']}/").content.decode()
    )


def test_a_value_outside_the_choices_is_refused_beside_its_select(admin, alice):
    response = admin.post(
        "/console/config/?level=acme",
        {"level": "acme", "expected_version": 0, "context_strategy": "everything"},
        **HTMX,
    )

    body = response.content.decode()
    assert "context_strategy must be one of observational, compaction, none" in body
    assert config_effective(agent=alice.agent)["context_strategy"] == "observational"


def test_a_new_key_is_shown_once_with_a_copy_button(admin, alice):
    response = admin.post("/console/keys/", {"agent": str(alice.agent.id)}, HTTP_HX_REQUEST="true")

    body = response.content.decode()
    secret = re.search(
        r'<code class="secret" id="issued-secret" data-copy-source>([^<]+)</code>', body
    )
    assert secret and secret.group(1).startswith("mc_")
    assert 'data-copy aria-label="Copy the new key">Copy</button>' in body
    assert "no-store" in response["Cache-Control"]


def test_the_keys_table_has_no_empty_header(admin, alice):
    body = admin.get("/console/keys/").content.decode()

    assert "<th></th>" not in body and '<th scope="col">Action</th>' in body


@pytest.mark.parametrize(
    "query, named",
    [
        ("status=lost", "status=lost: "),
        ("project=nope", "project=nope: "),
        ("agent=1", "agent=1: "),
    ],
)
def test_an_unknown_key_filter_is_told_and_lists_nothing(admin, alice, query, named):
    response = admin.get(f"/console/keys/?{query}")

    assert response.status_code == 400
    body = response.content.decode()
    assert named in body and "No keys are listed for a filter that cannot match." in body
    assert "mc_" + alice.key.split("_")[1] not in body
