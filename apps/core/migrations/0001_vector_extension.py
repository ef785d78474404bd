from django.db import migrations
from pgvector.django import VectorExtension


class Migration(migrations.Migration):
    """Enable pgvector on PostgreSQL; on SQLite this operation does nothing."""

    initial = True
    dependencies = []
    operations = [VectorExtension()]
