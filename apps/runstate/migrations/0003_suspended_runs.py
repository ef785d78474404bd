from django.db import migrations


def suspend_waiting_runs(apps, schema_editor):
    """A running run with a checkpoint no one has resumed reads suspended, as new ones do."""
    Run = apps.get_model("threads", "Run")
    Checkpoint = apps.get_model("runstate", "Checkpoint")
    waiting = Checkpoint.objects.filter(status="suspended").values("run_id")
    Run.objects.filter(status="running", pk__in=waiting).update(status="suspended")


def resume_suspended_runs(apps, schema_editor):
    Run = apps.get_model("threads", "Run")
    Run.objects.filter(status="suspended").update(status="running")


class Migration(migrations.Migration):
    dependencies = [
        ("runstate", "0002_artifact"),
        ("threads", "0003_run_suspended"),
    ]

    operations = [migrations.RunPython(suspend_waiting_runs, resume_suspended_runs)]
