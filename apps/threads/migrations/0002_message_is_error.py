from django.db import migrations, models
from django.db.models import Q

from apps.threads.outcome import message_outcome

BATCH = 1000


def mark_errors(apps, schema_editor):
    """Judge the stored results by the outcome function, as appends do from now on."""
    Message = apps.get_model("threads", "Message")
    Message.objects.filter(kind="error").update(is_error=True)
    results = Message.objects.filter(Q(kind="tool_result") | Q(role="tool", kind="message"))
    failed = []
    for message in results.only("id", "kind", "role", "content", "payload").iterator(BATCH):
        if message_outcome(message).error:
            failed.append(message.pk)
        if len(failed) >= BATCH:
            Message.objects.filter(pk__in=failed).update(is_error=True)
            failed = []
    Message.objects.filter(pk__in=failed).update(is_error=True)


class Migration(migrations.Migration):
    dependencies = [
        ("threads", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="message",
            name="is_error",
            field=models.BooleanField(default=False),
        ),
        migrations.AddIndex(
            model_name="message",
            index=models.Index(
                condition=models.Q(("is_error", True)),
                fields=["thread"],
                name="message_errors_by_thread",
            ),
        ),
        migrations.RunPython(mark_errors, migrations.RunPython.noop, elidable=True),
    ]
