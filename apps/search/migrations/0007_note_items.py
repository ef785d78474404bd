"""Notes become search items: a kind of their own and a note column.

The column is a nullable foreign key with a partial unique index rather than a one-to-one
field: SQLite adds a nullable column in place, but rebuilds the table for a unique one, and the
rebuild would drop the full-text triggers of migration 0002. Only notes and search are named
as dependencies, so rolling another app back leaves this column in place.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('notes', '0001_initial'),
        ('search', '0006_thread_words_index'),
    ]

    operations = [
        migrations.AddField(
            model_name='searchitem',
            name='note',
            field=models.ForeignKey(db_index=False, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='notes.note'),
        ),
        migrations.AlterField(
            model_name='itemembedding',
            name='kind',
            field=models.CharField(choices=[('message', 'Message'), ('chunk', 'Chunk'), ('entry', 'Entry'), ('note', 'Note')], max_length=16),
        ),
        migrations.AlterField(
            model_name='searchitem',
            name='kind',
            field=models.CharField(choices=[('message', 'Message'), ('chunk', 'Chunk'), ('entry', 'Entry'), ('note', 'Note')], max_length=16),
        ),
        migrations.AddConstraint(
            model_name='searchitem',
            constraint=models.UniqueConstraint(condition=models.Q(('note__isnull', False)), fields=('note',), name='search_item_note'),
        ),
    ]
