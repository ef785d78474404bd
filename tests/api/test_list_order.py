"""Lists answer in a total order: the one they promise (creation time), then the id.

UUIDv7 ids order rows only by their millisecond; the rest is random. Two rows made within one
millisecond are set up here with ids that disagree with the order they were made in (what a
random tail does about half the time), and rows of one microsecond with equal creation times.
"""

import uuid

import pytest

from apps.knowledge.models import Document
from apps.knowledge.selectors import document_list
from apps.knowledge.services import document_from_text, knowledge_base_create
from apps.runstate.models import IterationLog
from apps.tenancy.models import ApiKey
from apps.tenancy.selectors import api_key_list
from apps.tenancy.services import api_key_issue
from apps.threads.models import Thread

RAND_B = (1 << 62) - 1  # the last 62 random bits of a UUIDv7


def _id_after_within_its_millisecond(model, pk: str, other_pk: str) -> str:
    """Give row pk an id in other_pk's millisecond that sorts after it; return the new id."""
    new = str(uuid.UUID(int=uuid.UUID(other_pk).int | RAND_B))
    model.objects.filter(pk=pk).update(id=new)
    return new


def _ids(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]]


def test_it_lists_threads_made_within_one_millisecond_newest_first(alice):
    first = alice.new_thread()["id"]
    second = alice.new_thread()["id"]
    first = _id_after_within_its_millisecond(Thread, first, second)

    assert _ids(alice.get("/api/v1/threads")) == [second, first]


def test_it_lists_attempts_made_within_one_millisecond_oldest_first(alice):
    thread = alice.new_thread()["id"]
    path = f"/api/v1/threads/{thread}/iterations"
    first = alice.post(path, {"task": "t", "outcome": "failed"}).json()["id"]
    second = alice.post(path, {"task": "t", "outcome": "failed"}).json()["id"]
    first = _id_after_within_its_millisecond(IterationLog, first, second)

    assert _ids(alice.get(path)) == [first, second]


@pytest.mark.parametrize("limit", [1, 2, 50])
def test_rows_of_one_microsecond_are_ordered_by_id_on_every_page(alice, limit):
    made = [alice.new_thread()["id"] for _ in range(5)]
    Thread.objects.filter(pk__in=made).update(created_at=Thread.objects.get(pk=made[0]).created_at)

    seen, url = [], "/api/v1/threads"
    params = {"limit": limit}
    while url:
        body = alice.get(url, params).json()
        seen += [row["id"] for row in body["results"]]
        url, params = body["next"], None

    assert seen == sorted(made, reverse=True)


def test_the_console_lists_keys_and_documents_made_within_one_millisecond_newest_first(alice):
    second_key = api_key_issue(agent=alice.agent).api_key  # alice's own key came first
    first_key = ApiKey.objects.exclude(pk=second_key.pk).get()
    first_key_id = _id_after_within_its_millisecond(ApiKey, first_key.pk, str(second_key.pk))
    kb = knowledge_base_create(project=alice.agent.project, slug="ops")
    first_doc = document_from_text(kb=kb, title="One", text="one", actor="t").document
    second_doc = document_from_text(kb=kb, title="Two", text="two", actor="t").document
    first_doc_id = _id_after_within_its_millisecond(Document, first_doc.pk, str(second_doc.pk))

    keys = [str(key.pk) for key in api_key_list(agent=alice.agent)]
    documents = [str(document.pk) for document in document_list(kb=kb)]

    assert keys == [str(second_key.pk), first_key_id]
    assert documents == [str(second_doc.pk), first_doc_id]
