"""The --project / --agent arguments both notes commands take."""

from django.core.management.base import CommandError

from apps.tenancy.models import Agent, Project


def add_scope_arguments(parser) -> None:
    parser.add_argument("folder", help="The folder of .md files.")
    parser.add_argument("--project", required=True, help="Project slug.")
    parser.add_argument("--agent", help="Agent slug: its personal notes too, besides the shared.")


def project_and_agent(project: str, agent: str | None) -> tuple[Project, Agent | None]:
    project_row = Project.objects.filter(slug=project).first()
    if project_row is None:
        raise CommandError(f"No project {project!r}; create it with create_agent first.")
    if agent is None:
        return project_row, None
    agent_row = Agent.objects.filter(project=project_row, slug=agent).first()
    if agent_row is None:
        raise CommandError(f"No agent {agent!r} in project {project!r}.")
    return project_row, agent_row
