import json

from django.core.management.base import BaseCommand, CommandError

from apps.core.errors import ApplicationError
from apps.lifecycle.portability import project_import


class Command(BaseCommand):
    help = (
        "Load a project written by export_project into this database, index it for search and "
        "queue its embedding. Refuses when the project or any of its rows exists here already."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="The .jsonl file export_project wrote.")

    def handle(self, *args, file, **options):
        try:
            with open(file, encoding="utf-8") as lines:
                counts = project_import(lines=lines)
        except OSError as exc:
            raise CommandError(f"Cannot read {file}: {exc.strerror}.") from None
        except (ApplicationError, json.JSONDecodeError) as exc:
            raise CommandError(getattr(exc, "message", str(exc))) from None
        self.stdout.write(json.dumps({"file": file, "rows": counts}, indent=2))
        self.stdout.write("API keys are not exported: issue new keys for the agents.")
