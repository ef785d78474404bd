from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from apps.notes.folder import FolderError, notes_import
from apps.notes.management.commands._scope import add_scope_arguments, project_and_agent


class Command(BaseCommand):
    help = (
        "Read a folder written by notes_export into a project: shared notes, and personal ones "
        "into the agent named by --agent. All files are checked before any is written."
    )

    def add_arguments(self, parser):
        add_scope_arguments(parser)

    def handle(self, *args, folder, project, agent, **options):
        project_row, agent_row = project_and_agent(project, agent)
        try:
            result = notes_import(
                project=project_row,
                agent=agent_row,
                folder=Path(folder),
                actor="manage.py notes_import",
            )
        except FolderError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            f"{result.created} created, {result.updated} updated, {result.unchanged} unchanged."
        )
