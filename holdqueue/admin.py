"""Admin pages of live sites: the cluster-account table staff keep (``submit_as_owner``)."""

from django.contrib import admin

from holdqueue.models import ClusterAccount


@admin.register(ClusterAccount)
class ClusterAccountAdmin(admin.ModelAdmin):
    list_display = ("site", "user", "account")
    list_filter = ("site",)
    search_fields = ("user__username", "account")
