"""Registers the live-site API and where-to-submit on the shared router."""

from holdqueue import api_where
from holdqueue.views import SiteViewSet
from queuecast.router import router

router.register("sites", SiteViewSet, basename="site")
api_where.register(router)
