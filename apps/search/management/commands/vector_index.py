"""Create PostgreSQL's HNSW vector index for a dimension of embeddings.

    manage.py vector_index          the dimensions of every live vector index without one
    manage.py vector_index 3072 …   these dimensions (before switching to such an embedder)

Migration 0010 made the indexes of common dimensions (384, 512, 768, 1024, 1536). Built
CONCURRENTLY: appends and the vectors job go on meanwhile. SQLite has no vector index (it
scans with NumPy), and vectors over 2,000 dimensions are scanned exactly: nothing to do.
"""

from django.core.management.base import BaseCommand, CommandError
from django.db import OperationalError, connection

from apps.search.backends import backend
from apps.search.backends.postgres import HNSW_MAX_DIMS
from apps.search.models import VectorIndex, VectorIndexStatus


class Command(BaseCommand):
    help = "Create the HNSW vector index of embedding dimensions that lack one (PostgreSQL)."

    def add_arguments(self, parser):
        parser.add_argument("dims", nargs="*", type=int, help="dimensions (default: those in use)")

    def handle(self, *args, dims: list[int], **options):
        for value in dims:
            if not 1 <= value <= 16000:
                raise CommandError(f"dims {value}: give a dimension from 1 to 16,000.")
        if connection.vendor != "postgresql":
            self.stdout.write("SQLite scans vectors with NumPy: there is no vector index to make.")
            return
        if not dims:
            live = VectorIndex.objects.exclude(status=VectorIndexStatus.RETIRED)
            dims = sorted(set(live.values_list("dims", flat=True)))
            if not dims:
                self.stdout.write(
                    "No project has vectors yet: give the dimensions to index (manage.py "
                    "vector_index 3072), or run this again once the embedder has run."
                )
        for value in dims:
            if value > HNSW_MAX_DIMS:
                self.stdout.write(
                    f"{value} dimensions: scanned exactly (HNSW holds at most "
                    f"{HNSW_MAX_DIMS:,}), no index."
                )
            elif self._build(value):
                self.stdout.write(f"{value} dimensions: index created.")
            else:
                self.stdout.write(f"{value} dimensions: already indexed.")

    def _build(self, dims: int) -> bool:
        try:
            return backend().ensure_vector_index(dims)
        except OperationalError as error:
            # A concurrent build waits for every open transaction; one that waits for the
            # table in turn (a manual ANALYZE, a migration) ends it as a deadlock.
            raise CommandError(
                f"{dims} dimensions: the build was interrupted ({str(error).splitlines()[0]}). "
                "Run the command again: it drops the unfinished index and builds it anew."
            ) from error
