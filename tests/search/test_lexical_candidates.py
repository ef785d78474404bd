"""Full-text candidates: each term's newest matches in the scope, whatever lies around it.

The scope's rows are the oldest in the table and other scopes' matching rows are newer, the
case where reading "newest first" by the table's primary key would wade through other tenants.
"""

import pytest
from django.db import connection
from django.utils import timezone

from apps.knowledge.services import knowledge_base_get_or_create
from apps.search.backends import backend
from apps.search.backends.common import matches_per_term
from apps.search.models import SearchItem
from apps.search.query import Term
from apps.search.scope import Scope
from apps.tenancy.services import agent_get_or_create, project_get_or_create
from apps.threads.services import thread_resolve_or_create
from tests.conftest import recorded_sql

MINE, OTHERS, PER_TERM = 30, 120, 10
# PostgreSQL's ways to a term's matches (backends/postgres.py), by (SEARCH_LEXICAL_SAMPLE,
# SEARCH_LEXICAL_WALK, SEARCH_LEXICAL_SCAN): a small scope read whole; a small scope left to the
# planner; a larger one whose first sample holds every match; a sample, then a walk for the
# common term and the GIN index for the rare one. (SQLite has one way.)
STRATEGIES = {
    "scan": (1000, 20000, 20000),
    "small": (1000, 20000, 0),
    "sample": (1000, 10, 0),
    "walk": (4, 10, 0),
}


@pytest.fixture(params=list(STRATEGIES))
def strategy(request, settings):
    (
        settings.SEARCH_LEXICAL_SAMPLE,
        settings.SEARCH_LEXICAL_WALK,
        settings.SEARCH_LEXICAL_SCAN,
    ) = STRATEGIES[request.param]
    settings.SEARCH_LEXICAL_CANDIDATES = PER_TERM
    return request.param


@pytest.fixture
def world(db):
    """Return the scopes under test, each with its item ids (oldest first)."""
    project, _ = project_get_or_create(slug="scoped")
    agent, _ = agent_get_or_create(project=project, slug="agent")
    other_agent, _ = agent_get_or_create(project=project, slug="other")
    thread, _ = thread_resolve_or_create(agent=agent, resource_id="user-1")
    other_thread, _ = thread_resolve_or_create(agent=agent, resource_id="user-2")
    kb = knowledge_base_get_or_create(project=project, slug="manual", actor="test")
    other_kb = knowledge_base_get_or_create(project=project, slug="other", actor="test")

    def message(agent_row, thread_row, text):
        return SearchItem(
            kind="message",
            project_id=project.id,
            agent_id=agent_row.id,
            thread_id=thread_row.id if thread_row else None,
            content=text,
            created_at=timezone.now(),
        )

    def chunk(kb_row, text):
        return SearchItem(
            kind="chunk", project_id=project.id, knowledge_base_id=kb_row.id, content=text,
            created_at=timezone.now(),
        )  # fmt: skip

    def texts(count):
        # The first (oldest) row also holds a rare word.
        return [f"alpha report {n}" + (" zeppelin" if n == 0 else "") for n in range(count)]

    def store(rows):
        return [row.id for row in SearchItem.objects.bulk_create(rows)]

    scoped = {
        "thread": (
            Scope(kind="message", project_id=project.id, agent_id=agent.id, thread_id=thread.id),
            store([message(agent, thread, text) for text in texts(MINE)]),
        ),
        "knowledge base": (
            Scope(kind="chunk", project_id=project.id, knowledge_base_ids=(kb.id,)),
            store([chunk(kb, text) for text in texts(MINE)]),
        ),
        "agent": (
            Scope(kind="message", project_id=project.id, agent_id=other_agent.id),
            store([message(other_agent, None, text) for text in texts(MINE)]),
        ),
    }
    # Newer matching rows outside each scope above (and inside the two-base scope below).
    store([message(agent, other_thread, "alpha report again") for _ in range(OTHERS)])
    store([chunk(other_kb, "alpha report again") for _ in range(OTHERS)])
    both_kbs = Scope(kind="chunk", project_id=project.id, knowledge_base_ids=(kb.id, other_kb.id))
    scoped["two bases"] = (both_kbs, None)
    return scoped


@pytest.mark.parametrize("name", ["thread", "knowledge base", "agent"])
def test_a_common_term_brings_the_scopes_newest_matches(world, strategy, name):
    scope, ids = world[name]

    found = backend().lexical_candidates(scope, ["alpha"], limit=100)

    assert sorted(c.item_id for c in found) == ids[-PER_TERM:]


def _thread_of(slug: str, texts: list[str]) -> tuple[Scope, list[SearchItem]]:
    """Return a new thread's message scope and its items, one per text, oldest first."""
    project, _ = project_get_or_create(slug=slug)
    agent, _ = agent_get_or_create(project=project, slug="agent")
    thread, _ = thread_resolve_or_create(agent=agent, resource_id="user-1")
    rows = SearchItem.objects.bulk_create(
        SearchItem(
            kind="message",
            project_id=project.id,
            agent_id=agent.id,
            thread_id=thread.id,
            content=text,
            created_at=timezone.now(),
        )
        for text in texts
    )
    scope = Scope(kind="message", project_id=project.id, agent_id=agent.id, thread_id=thread.id)
    return scope, rows


def test_a_short_list_reads_as_many_of_each_terms_matches(db, strategy):
    # Three matches just before the 3 newest outscore all the others (the word thrice in a
    # short text), so they would lead any list drawn from more than the 3 newest matches.
    weak = "alpha and a long report of other things"
    scope, rows = _thread_of("short", [weak] * 4 + ["alpha alpha alpha"] * 3 + [weak] * 3)

    wide = backend().lexical_candidates(scope, ["alpha"], limit=20)
    short = backend().lexical_candidates(scope, ["alpha"], limit=3)

    assert {c.item_id for c in wide[:3]} == {row.id for row in rows[4:7]}
    # Three asked for: each term reads its 3 newest matches, not PER_TERM (10).
    assert {c.item_id for c in short} == {row.id for row in rows[-3:]}


def test_the_words_of_a_query_share_the_candidates_asked_for(db, strategy, settings):
    # Every text holds one of the words, in turn: each word's matches are a third of the thread.
    settings.SEARCH_LEXICAL_CANDIDATES, settings.SEARCH_CANDIDATES = 100, 4
    scope, rows = _thread_of("shared", [("alpha", "beta", "gamma")[n % 3] for n in range(60)])
    newest = {word: [r.id for r in rows if r.content == word][-12:] for word in ("alpha", "beta")}

    one = backend().lexical_candidates(scope, ["alpha"], limit=12)
    two = backend().lexical_candidates(scope, ["alpha", "beta"], limit=12)

    # One word brings as many of its newest matches as candidates are asked for, two words
    # half as many each.
    assert sorted(c.item_id for c in one) == newest["alpha"]
    assert sorted(c.item_id for c in two) == sorted(newest["alpha"][-6:] + newest["beta"][-6:])


def test_no_word_brings_fewer_than_search_candidates(settings):
    settings.SEARCH_LEXICAL_CANDIDATES, settings.SEARCH_CANDIDATES = 200, 50

    assert matches_per_term(120, 1) == 120
    assert matches_per_term(120, 2) == 60
    assert matches_per_term(120, 3) == 50  # not 40
    assert matches_per_term(30, 3) == 30  # fewer asked for than SEARCH_CANDIDATES
    assert matches_per_term(400, 1) == 200  # at most SEARCH_LEXICAL_CANDIDATES


def test_a_term_missing_from_the_scope_finds_nothing(world, strategy):
    scope, _ = world["thread"]

    assert backend().lexical_candidates(scope, ["again"], limit=100) == []


@pytest.mark.parametrize("name", ["thread", "knowledge base", "agent"])
def test_a_rare_terms_old_match_is_not_crowded_out(world, strategy, name):
    scope, ids = world[name]

    found = backend().lexical_candidates(scope, ["alpha", "zeppelin"], limit=100)

    found_ids = [c.item_id for c in found]
    assert found_ids[0] == ids[0]  # both terms: ranked first
    assert set(found_ids) == {ids[0], *ids[-PER_TERM:]}


def test_a_scope_of_two_bases_takes_the_newest_of_both(world, strategy):
    scope, _ = world["two bases"]
    newest = SearchItem.objects.filter(kind="chunk").order_by("-id")[:PER_TERM]

    found = backend().lexical_candidates(scope, ["alpha"], limit=100)

    assert {c.item_id for c in found} == {item.id for item in newest}


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL planner settings")
def test_the_walks_planner_settings_do_not_outlast_it(world, strategy):
    scope, _ = world["agent"]
    backend().lexical_candidates(scope, ["alpha"], limit=100)  # inside the test's transaction

    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('enable_sort'), current_setting('enable_seqscan')")
        assert cursor.fetchone() == ("on", "on")


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's sample of a scope")
def test_the_sample_reads_four_times_the_quota_of_newest_items(world, settings):
    settings.SEARCH_LEXICAL_SAMPLE, settings.SEARCH_LEXICAL_WALK = 1000, 10
    settings.SEARCH_LEXICAL_SCAN, settings.SEARCH_LEXICAL_CANDIDATES = 0, PER_TERM
    scope, ids = world["knowledge base"]
    limits = []

    def sample_limit(execute, sql, params, many, context):
        if "count(*) OVER ()" in sql:
            limits.append(params[-2])  # the sample's LIMIT, before the words' tsquery
        return execute(sql, params, many, context)

    with connection.execute_wrapper(sample_limit):
        found = backend().lexical_candidates(scope, ["alpha"], limit=2)

    assert limits == [8]  # a quota of 2 matches, 4 times over
    assert {c.item_id for c in found} == set(ids[-2:])


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's ways to a word")
def test_a_word_seen_once_in_the_sample_is_not_walked_for_when_it_is_rare(db, settings):
    # A scope larger than SEARCH_LEXICAL_WALK, so it is sampled; the word's one match in the
    # sample puts the missing nine at 180 items of walk, more than the sample's 20.
    settings.SEARCH_LEXICAL_SAMPLE, settings.SEARCH_LEXICAL_WALK = 20, 250
    settings.SEARCH_LEXICAL_SCAN, settings.SEARCH_LEXICAL_CANDIDATES = 0, PER_TERM
    project, _ = project_get_or_create(slug="rare")
    kb = knowledge_base_get_or_create(project=project, slug="manual", actor="test")
    texts = [f"alpha report {n}" for n in range(300)]
    texts[5] += " quokka"
    texts[-1] += " quokka"
    rows = SearchItem.objects.bulk_create(
        SearchItem(
            kind="chunk",
            project_id=project.id,
            knowledge_base_id=kb.id,
            content=text,
            created_at=timezone.now(),
        )  # fmt: skip
        for text in texts
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE search_searchitem")
    scope = Scope(kind="chunk", project_id=project.id, knowledge_base_ids=(kb.id,))
    with recorded_sql() as statements:
        found = backend().lexical_candidates(scope, ["quokka"], limit=PER_TERM)

    assert {c.item_id for c in found} == {rows[5].id, rows[-1].id}
    # The planner was asked how common the word is, and its index read instead of a walk.
    assert any(sql.startswith("EXPLAIN") for sql in statements)
    assert not any("enable_bitmapscan" in sql for sql in statements)
    assert any("WHERE si.tsv @@" in sql for sql in statements)


@pytest.mark.skipif("connection.vendor != 'sqlite'")
def test_sqlite_asks_for_a_words_other_forms_only_while_it_lacks_matches(db):
    # FTS5 reads a prefix across the whole index (backends/sqlite.py): a word that fills its
    # quota of matches in the scope by itself is not asked for by its prefix as well.
    texts = ["die Rechnung ist offen"] * 3 + ["Rechnungsnummer 42 fehlt"] * 2
    scope, rows = _thread_of("forms", texts)
    term = Term("rechnung", prefixes=("rechnung",))

    filled = backend().lexical_candidates(scope, [term], limit=2)
    lacking = backend().lexical_candidates(scope, [term], limit=10)

    # Two asked for, three matches of the word itself: the newest two of those.
    assert {c.item_id for c in filled} == {row.id for row in rows[1:3]}
    # Ten asked for: its other forms ("Rechnungsnummer") come too.
    assert {c.item_id for c in lacking} == {row.id for row in rows}
