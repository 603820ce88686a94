"""Registers the live-site API on the shared router."""

from holdqueue.views import SiteViewSet
from queuecast.router import router

router.register("sites", SiteViewSet, basename="site")
