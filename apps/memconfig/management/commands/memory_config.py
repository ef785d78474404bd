import json

from django.core.management.base import BaseCommand, CommandError

from apps.core.errors import ApplicationError
from apps.memconfig.selectors import config_effective
from apps.memconfig.services import config_update
from apps.tenancy.models import Agent, Project


class Command(BaseCommand):
    help = "Show the effective memory config of an agent, or set values at a level."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="Project slug.")
        parser.add_argument("--agent", help="Agent slug; without it --set applies to the project.")
        parser.add_argument(
            "--set", action="append", default=[], metavar="KEY=VALUE", help="Repeatable."
        )
        parser.add_argument(
            "--unset", action="append", default=[], metavar="KEY", help="Inherit again."
        )

    def handle(self, *args, project, agent, set, unset, **options):
        project_row = Project.objects.filter(slug=project).first()
        if project_row is None:
            raise CommandError(f"No project {project!r}.")
        agent_row = None
        if agent:
            agent_row = Agent.objects.filter(project=project_row, slug=agent).first()
            if agent_row is None:
                raise CommandError(f"No agent {agent!r} in project {project!r}.")
        changes = dict.fromkeys(unset)
        for item in set:
            key, sep, value = item.partition("=")
            if not sep:
                raise CommandError(f"--set takes KEY=VALUE, got {item!r}.")
            changes[key.strip()] = value
        if changes:
            try:
                config_update(
                    changes=changes,
                    changed_by="manage.py memory_config",
                    project=None if agent_row else project_row,
                    agent=agent_row,
                )
            except ApplicationError as exc:
                raise CommandError(exc.message) from None
        if agent_row is not None:
            effective = config_effective(agent=agent_row)
            rows = {k: [effective.values[k], effective.sources[k]] for k in effective.values}
            self.stdout.write(json.dumps(rows, indent=2))
