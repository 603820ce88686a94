"""The token endpoint, throttled: ``QUEUECAST_TOKEN_RATE`` attempts per client address."""

from __future__ import annotations

from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.throttling import AnonRateThrottle


class TokenRateThrottle(AnonRateThrottle):
    """Counts every request to the endpoint by client address (logged in or not)."""

    scope = "token"

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class ThrottledObtainAuthToken(ObtainAuthToken):
    throttle_classes = [TokenRateThrottle]


obtain_auth_token = ThrottledObtainAuthToken.as_view()
