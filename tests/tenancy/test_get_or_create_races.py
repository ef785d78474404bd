"""Concurrent get-or-creates of projects, agents and resources: one row, every caller gets it.

Each caller is a real thread with its own database connection. On PostgreSQL the inserts
overlap and the losers read the winner's row after their IntegrityError; on SQLite the writers
are serialised, and the outcome must be the same.
"""

import threading
from concurrent.futures import ThreadPoolExecutor

from django.db import connection

from apps.tenancy.models import Agent, Project, Resource
from apps.tenancy.services import agent_get_or_create, project_get_or_create, resource_get_or_create

CALLERS = 6


def _at_once(call) -> list:
    start = threading.Barrier(CALLERS)

    def run(_):
        try:
            start.wait()
            return call()
        finally:
            connection.close()  # each thread's own connection

    with ThreadPoolExecutor(CALLERS) as pool:
        return list(pool.map(run, range(CALLERS)))


def test_concurrent_project_and_agent_creates_return_one_row(transactional_db):
    projects = _at_once(lambda: project_get_or_create(slug="acme"))
    project = projects[0][0]
    agents = _at_once(lambda: agent_get_or_create(project=project, slug="alice"))

    assert {p.pk for p, _ in projects} == {project.pk}
    assert sorted(created for _, created in projects) == [False] * (CALLERS - 1) + [True]
    assert {a.pk for a, _ in agents} == {agents[0][0].pk}
    assert sorted(created for _, created in agents) == [False] * (CALLERS - 1) + [True]
    assert Project.objects.count() == 1
    assert Agent.objects.filter(project=project).count() == 1


def test_concurrent_resource_creates_return_one_row(transactional_db):
    project, _ = project_get_or_create(slug="acme")

    resources = _at_once(lambda: resource_get_or_create(project=project, external_id="cust-1"))

    assert len({r.pk for r in resources}) == 1
    assert Resource.objects.filter(project=project, external_id="cust-1").count() == 1
