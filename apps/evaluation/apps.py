from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "apps.evaluation"
    label = "evaluation"
    verbose_name = "Retrieval evaluation"

    def ready(self):
        from apps.evaluation import jobs  # noqa: F401  (registers the evaluation job)
