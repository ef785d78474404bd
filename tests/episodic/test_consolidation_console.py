"""A thread's consolidation progress on its console page."""

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from apps.episodic.consolidation import thread_consolidate_now
from apps.threads.models import Thread
from tests.episodic.test_consolidation import conversation


@pytest.fixture
def operator(db) -> Client:
    user = User.objects.create_user(username="operator", password="pw")
    user.groups.set(Group.objects.filter(name="operator"))
    client = Client()
    client.force_login(user)
    return client


def _card(operator, thread_id) -> str:
    page = operator.get(f"/console/threads/{thread_id}/")
    assert page.status_code == 200
    body = page.content.decode()
    start = body.index('<div class="card" id="consolidation">')
    return body[start : body.index("</div>", start)]


def test_the_thread_page_says_nothing_is_consolidated_yet_and_what_waits(operator, alice):
    thread = alice.new_thread()
    alice.append(thread["id"], *conversation(14))

    card = _card(operator, thread["id"])

    assert "Nothing consolidated yet." in card
    assert "4 messages outside the short-term window (10) wait" in card
    assert "every 300 s" in card


def test_the_thread_page_shows_the_last_consolidated_seq_and_the_entries_made(operator, alice):
    thread = alice.new_thread()
    alice.append(thread["id"], *conversation(30))
    thread_consolidate_now(thread=Thread.objects.get(pk=thread["id"]))

    card = _card(operator, thread["id"])

    assert "Consolidated up to message #20 · 5 entries made" in card
    assert "0 messages outside the short-term window (10) wait" in card
    assert "last run" in card
