from pathlib import Path

from django.core.files import File
from django.core.management.base import BaseCommand, CommandError

from apps.core.errors import ApplicationError
from apps.jobs.services import job_run_pending
from apps.knowledge.models import Document, DocumentStatus
from apps.knowledge.services import document_upload, knowledge_base_get_or_create
from apps.tenancy.models import Project

BAR_WIDTH = 30


class Command(BaseCommand):
    help = "Ingest every file of a folder into a knowledge base, showing progress."

    def add_arguments(self, parser):
        parser.add_argument("folder")
        parser.add_argument("--project", required=True, help="Project slug.")
        parser.add_argument("--kb", required=True, help="Knowledge base slug (created if missing).")
        parser.add_argument("--recursive", action="store_true", help="Include sub-folders.")
        parser.add_argument(
            "--background",
            action="store_true",
            help="Only queue the documents; a running worker ingests them.",
        )

    def handle(self, *args, folder, project, kb, recursive, background, **options):
        root = Path(folder)
        if not root.is_dir():
            raise CommandError(f"{folder} is not a folder.")
        project_row = Project.objects.filter(slug=project).first()
        if project_row is None:
            raise CommandError(f"No project {project!r}; create it with create_agent first.")
        knowledge_base = knowledge_base_get_or_create(
            project=project_row, slug=kb, actor="manage.py ingest_folder"
        )
        files = sorted(p for p in (root.rglob("*") if recursive else root.iterdir()) if p.is_file())
        if not files:
            raise CommandError(f"{folder} holds no files.")
        documents = self._upload(knowledge_base, files)
        if background:
            self.stdout.write(f"\n{len(documents)} documents queued for the worker.")
            return
        self._ingest(documents)

    def _upload(self, knowledge_base, files) -> list[Document]:
        documents = []
        for number, path in enumerate(files, start=1):
            self._bar("upload", number, len(files), path.name)
            try:
                with path.open("rb") as handle:
                    result = document_upload(
                        kb=knowledge_base,
                        upload=File(handle, name=path.name),
                        actor="manage.py ingest_folder",
                    )
            except ApplicationError as exc:
                self.stdout.write(f"\n  skipped {path}: {exc.message}")
                continue
            documents.append(result.document)
        self.stdout.write("")
        return documents

    def _ingest(self, documents: list[Document]) -> None:
        ids = [document.id for document in documents]
        finished = {DocumentStatus.READY, DocumentStatus.FAILED}
        while True:
            statuses = dict(Document.objects.filter(id__in=ids).values_list("id", "status"))
            done = sum(1 for status in statuses.values() if status in finished)
            self._bar("ingest", done, len(ids), "")
            if done == len(ids) or not job_run_pending(limit=1):
                break
        self.stdout.write("")
        for document in Document.objects.filter(id__in=ids).order_by("title"):
            line = f"  {document.status:<8} {document.title} ({document.chunk_count} chunks)"
            self.stdout.write(line + (f": {document.error}" if document.error else ""))

    def _bar(self, label: str, done: int, total: int, note: str) -> None:
        filled = BAR_WIDTH * done // max(total, 1)
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        self.stdout.write(f"\r{label:<6} [{bar}] {done}/{total} {note[:40]:<40}", ending="")
        self.stdout.flush()
