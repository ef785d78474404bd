import uuid

from django.core.management.base import BaseCommand, CommandError

from apps.episodic.consolidation import thread_consolidate_now
from apps.tenancy.models import Agent
from apps.threads.models import Thread


class Command(BaseCommand):
    help = (
        "Consolidate now the messages that left the short-term window, whatever the interval, "
        "and print what was done per thread."
    )

    def add_arguments(self, parser):
        parser.add_argument("--thread", help="Only this thread (its id).")
        parser.add_argument("--agent", help="Only this agent's threads (its slug).")
        parser.add_argument("--project", help="The agent's project, when its slug is not unique.")

    def handle(self, *args, thread, agent, project, **options):
        threads = Thread.objects.select_related("agent__project", "resource").order_by(
            "created_at", "id"
        )
        if thread:
            try:
                threads = threads.filter(pk=uuid.UUID(thread))
            except ValueError:
                raise CommandError(f"--thread: {thread!r} is not a thread id (a UUID).") from None
            if not threads.exists():
                raise CommandError(f"--thread: no thread {thread}.")
        if agent:
            threads = threads.filter(agent=self._agent(agent, project))
        elif project:
            raise CommandError("--project: give it with --agent.")
        totals = {"threads": 0, "created": 0, "messages": 0}
        for row in threads.iterator():
            report = thread_consolidate_now(thread=row)
            self.stdout.write(str(report))
            totals["threads"] += 1
            totals["created"] += report.created
            totals["messages"] += report.messages
        self.stdout.write(
            f"{totals['threads']} threads, {totals['messages']} messages consolidated, "
            f"{totals['created']} entries created"
        )

    def _agent(self, slug: str, project: str | None) -> Agent:
        agents = Agent.objects.filter(slug=slug)
        if project:
            agents = agents.filter(project__slug=project)
        found = list(agents.select_related("project")[:2])
        if not found:
            where = f" in project {project!r}" if project else ""
            raise CommandError(f"--agent: no agent {slug!r}{where}.")
        if len(found) > 1:
            raise CommandError(
                f"--agent: {slug!r} names agents of several projects; add --project SLUG."
            )
        return found[0]
