from django.apps import AppConfig


class HoldqueueConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "holdqueue"

    def ready(self) -> None:
        from holdqueue import pages_predict
        from queuecast import page_parts

        page_parts.register(page_parts.PREDICT_SITE, "site", pages_predict)
