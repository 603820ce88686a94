from django.apps import AppConfig


class JobmoldingConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "jobmolding"

    def ready(self) -> None:
        from jobmolding.pages import runs_block
        from queuecast import page_parts

        page_parts.register(page_parts.RUNS_LIST, "molding", runs_block)
