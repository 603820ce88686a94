from django.apps import AppConfig


class HoldqueueConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "holdqueue"
