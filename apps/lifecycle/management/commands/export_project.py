import json

from django.core.management.base import BaseCommand, CommandError

from apps.lifecycle.portability import project_export
from apps.tenancy.models import Project


class Command(BaseCommand):
    help = (
        "Write a project's whole memory state to FILE as JSON lines (one row per line, with its "
        "type), for import_project. API keys, search items and vectors are not exported."
    )

    def add_arguments(self, parser):
        parser.add_argument("project", help="The project's slug.")
        parser.add_argument("file", help="The .jsonl file to write.")

    def handle(self, *args, project, file, **options):
        found = Project.objects.filter(slug=project).first()
        if found is None:
            raise CommandError(f"No project {project!r}.")
        with open(file, "w", encoding="utf-8") as out:
            counts = project_export(project=found, out=out)
        self.stdout.write(json.dumps({"project": project, "file": file, "rows": counts}, indent=2))
