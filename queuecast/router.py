"""The one API router. Each app registers its viewsets in its ``routes.py``."""

from rest_framework.routers import DefaultRouter

router = DefaultRouter()
# Accept URLs with and without the trailing slash (``/api/traces/1/predictions/wait``);
# DRF's constructor only takes True/False, so the pattern is set afterwards.
router.trailing_slash = "/?"
