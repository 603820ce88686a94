"""Admin pages for traces (read-mostly: jobs come in through ingest only)."""

from django.contrib import admin

from traces.models import Job, Trace


@admin.register(Trace)
class TraceAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "owner",
        "status",
        "progress",
        "job_count",
        "machine_procs",
        "utilisation",
        "created_at",
    )
    list_filter = ("status",)
    search_fields = ("name", "description")
    readonly_fields = (
        "header",
        "ingest_report",
        "job_count",
        "first_submit_s",
        "last_submit_s",
        "machine_procs",
        "utilisation",
        "upload_path",
    )


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = (
        "trace",
        "job_number",
        "submit_time",
        "wait_time",
        "run_time",
        "allocated_procs",
        "user_id",
        "queue_id",
    )
    list_filter = ("trace",)
    raw_id_fields = ("trace",)
    list_select_related = ("trace",)
    show_full_result_count = False  # counting millions of rows on every page is slow
