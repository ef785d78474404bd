from django.core.management.base import BaseCommand, CommandError
from django.utils.text import slugify

from apps.tenancy.models import KeyScope
from apps.tenancy.services import agent_get_or_create, api_key_issue, project_get_or_create


class Command(BaseCommand):
    help = "Create the project and agent if missing and issue a new API key (last line)."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="Project slug.")
        parser.add_argument("--agent", required=True, help="Agent slug.")
        parser.add_argument("--key-name", default="", help="A label for the new key.")
        parser.add_argument(
            "--admin",
            action="store_true",
            help="Issue a project-admin key: it may also change the project's memory settings "
            "and action webhooks over the API.",
        )

    def handle(self, *args, project, agent, key_name, admin, **options):
        for label, value in (("--project", project), ("--agent", agent)):
            if slugify(value) != value:
                raise CommandError(
                    f"{label} {value!r} is not a slug: use lowercase letters, digits, '-' or '_'."
                )
        project_row, created = project_get_or_create(slug=project)
        self.stdout.write(f"project {project}: {'created' if created else 'exists'}")
        agent_row, created = agent_get_or_create(project=project_row, slug=agent)
        self.stdout.write(f"agent {project}/{agent}: {'created' if created else 'exists'}")
        issued = api_key_issue(
            agent=agent_row,
            name=key_name,
            actor="manage.py create_agent",
            scope=KeyScope.ADMIN if admin else KeyScope.AGENT,
        )
        kind = "Project-admin API key" if admin else "API key"
        self.stdout.write(f"{kind} (shown once; only its hash is stored):")
        self.stdout.write(issued.secret)
