from importlib import import_module

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerView,
)

from queuecast.auth import login_view, obtain_auth_token, throttle_posts
from queuecast.router import router

# JSON bodies for errors under /api/ that never reach a DRF view (unknown URL, crash).
handler404 = "queuecast.errors.page_not_found"
handler500 = "queuecast.errors.server_error"

# Each app's routes module registers its viewsets on the shared router.
for _app in ("traces", "predictor", "pyss_adapter", "jobmolding", "holdqueue"):
    try:
        import_module(f"{_app}.routes")
    except ModuleNotFoundError as exc:
        if exc.name != f"{_app}.routes":
            raise

urlpatterns = [
    path("admin/login/", throttle_posts(admin.site.login), name="admin-login"),  # throttled
    path("admin/", admin.site.urls),
    path("accounts/login/", login_view, name="login"),  # throttled (queuecast/auth.py)
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/token/", obtain_auth_token, name="api-token"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema"), name="api-redoc"),
    path("api/", include(router.urls)),
    path("", include("queuecast.pages")),
    path("", include("traces.pages")),
    path("", include("predictor.pages.predict")),
    path("", include("pyss_adapter.pages")),
    path("", include("jobmolding.pages")),
    path("", include("holdqueue.pages")),
]
