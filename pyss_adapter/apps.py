from django.apps import AppConfig


class PyssAdapterConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "pyss_adapter"
