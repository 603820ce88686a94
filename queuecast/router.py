"""The one API router. Each app registers its viewsets in its ``routes.py``."""

from rest_framework.routers import DefaultRouter

router = DefaultRouter(trailing_slash="/?")
