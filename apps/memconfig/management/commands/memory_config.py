import json

from django.core.management.base import BaseCommand, CommandError

from apps.core.errors import ApplicationError
from apps.memconfig.selectors import (
    config_effective,
    config_effective_for_project,
    config_level_get,
)
from apps.memconfig.services import config_update
from apps.tenancy.models import Agent, Project


class Command(BaseCommand):
    help = (
        "Show the effective memory config of a project (or of one of its agents, with --agent) "
        "as JSON, each key with its value and the level it comes from; with --set / --unset, "
        "change that level first and print each change."
    )

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
            self._change(changes, project_row, agent_row)
        if agent_row is not None:
            effective = config_effective(agent=agent_row)
        else:
            effective = config_effective_for_project(project_id=project_row.pk)
        rows = {k: [effective.values[k], effective.sources[k]] for k in effective.values}
        self.stdout.write(json.dumps(rows, indent=2))

    def _change(self, changes: dict, project: Project, agent: Agent | None) -> None:
        """Apply the changes at the level named, then say what each one did."""
        level = f"agent {project.slug}/{agent.slug}" if agent else f"project {project.slug}"
        target = {"project": None, "agent": agent} if agent else {"project": project}
        row = config_level_get(**target)
        before = dict(row.values) if row else {}
        try:
            config = config_update(changes=changes, changed_by="manage.py memory_config", **target)
        except ApplicationError as exc:
            raise CommandError(exc.message) from None
        after = config.values
        changed = [
            key
            for key in sorted(set(before) | set(after))
            if before.get(key, _NONE) != after.get(key, _NONE)
        ]
        if not changed:
            self.stdout.write(f"No change: {level} already had these values.")
            return
        for key in changed:
            if key not in after:
                self.stdout.write(f"{level}: unset {key} (was {before[key]!r}; inherited again)")
            elif key in before:
                self.stdout.write(f"{level}: {key} = {after[key]!r} (was {before[key]!r})")
            else:
                self.stdout.write(f"{level}: {key} = {after[key]!r} (was inherited)")
        self.stdout.write(f"{level}: config now at version {config.version}.")


_NONE = object()
