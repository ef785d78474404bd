from django.apps import AppConfig


class NotesConfig(AppConfig):
    name = "apps.notes"
    label = "notes"
    verbose_name = "Long-term notes"
