"""Text artifacts of runs become search items: a kind of their own and an artifact column,
a nullable foreign key with a partial unique index, as 0007 explains for notes."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('runstate', '0002_artifact'),
        ('search', '0007_note_items'),
    ]

    operations = [
        migrations.AddField(
            model_name='searchitem',
            name='artifact',
            field=models.ForeignKey(db_index=False, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='runstate.artifact'),
        ),
        migrations.AlterField(
            model_name='itemembedding',
            name='kind',
            field=models.CharField(choices=[('message', 'Message'), ('chunk', 'Chunk'), ('entry', 'Entry'), ('note', 'Note'), ('artifact', 'Artifact')], max_length=16),
        ),
        migrations.AlterField(
            model_name='searchitem',
            name='kind',
            field=models.CharField(choices=[('message', 'Message'), ('chunk', 'Chunk'), ('entry', 'Entry'), ('note', 'Note'), ('artifact', 'Artifact')], max_length=16),
        ),
        migrations.AddConstraint(
            model_name='searchitem',
            constraint=models.UniqueConstraint(condition=models.Q(('artifact__isnull', False)), fields=('artifact',), name='search_item_artifact'),
        ),
    ]
