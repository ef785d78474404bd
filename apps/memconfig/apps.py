from django.apps import AppConfig


class MemconfigConfig(AppConfig):
    name = "apps.memconfig"
    label = "memconfig"
    verbose_name = "Memory config"
