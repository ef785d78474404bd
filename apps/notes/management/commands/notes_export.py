from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from apps.notes.folder import FolderError, notes_export
from apps.notes.management.commands._scope import add_scope_arguments, project_and_agent


class Command(BaseCommand):
    help = (
        "Write a project's shared notes (and one agent's own, with --agent) to an empty folder, "
        "one .md file per note with YAML front matter."
    )

    def add_arguments(self, parser):
        add_scope_arguments(parser)

    def handle(self, *args, folder, project, agent, **options):
        project_row, agent_row = project_and_agent(project, agent)
        try:
            written = notes_export(project=project_row, agent=agent_row, folder=Path(folder))
        except FolderError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"{len(written)} note(s) written to {folder}.")
