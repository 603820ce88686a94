from django.apps import AppConfig


class JobmoldingConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "jobmolding"
