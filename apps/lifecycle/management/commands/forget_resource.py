import json

from django.core.management.base import BaseCommand, CommandError

from apps.core.errors import ApplicationError
from apps.lifecycle.services import resource_forget
from apps.tenancy.models import Agent


class Command(BaseCommand):
    help = (
        "Forget one end user of an agent: delete their threads, messages, runs, entries, "
        "profile, session memory, snapshots, observations, summaries and vectors, and print "
        "the count deleted per kind as JSON."
    )

    def add_arguments(self, parser):
        parser.add_argument("project", help="The project's slug.")
        parser.add_argument("agent", help="The agent's slug in that project.")
        parser.add_argument("resource_id", help="The end user's external id.")

    def handle(self, *args, project, agent, resource_id, **options):
        found = Agent.objects.select_related("project").filter(project__slug=project, slug=agent)
        the_agent = found.first()
        if the_agent is None:
            raise CommandError(f"No agent {agent!r} in a project {project!r}.")
        try:
            deleted = resource_forget(
                agent=the_agent, resource_external_id=resource_id, actor="command:forget_resource"
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(json.dumps({"resource_id": resource_id, "deleted": deleted}, indent=2))
