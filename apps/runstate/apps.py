from django.apps import AppConfig


class RunstateConfig(AppConfig):
    name = "apps.runstate"
    label = "runstate"
    verbose_name = "Plans, iterations, checkpoints and snapshots"
