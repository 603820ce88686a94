"""Password guessing is throttled on both login paths, by the real client address.

``/api/token/`` (DRF), ``/accounts/login/`` (the HTML form) and ``/admin/login/`` share one budget:
``QUEUECAST_LOGIN_RATE`` attempts per client address (``queuecast.client_address``: a
forged ``X-Forwarded-For`` changes nothing unless the peer is a trusted proxy). Counts live
in the ``throttle`` cache, which every gunicorn worker shares (a file cache in the embedded
setup, Redis with a broker; ``queuecast/settings.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib.auth.views import LoginView
from django.core.cache import caches
from django.http import HttpRequest, HttpResponse
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.throttling import SimpleRateThrottle

from queuecast.client_address import client_address, proxy_networks


class LoginRateThrottle(SimpleRateThrottle):
    """Counts every login attempt (token or form) by client address, logged in or not."""

    scope = "login"

    @property
    def cache(self) -> Any:  # type: ignore[override]
        return caches["throttle"]

    def get_ident(self, request: Any) -> str:
        return client_address(request.META, proxy_networks(settings.QUEUECAST_TRUSTED_PROXIES))

    def get_cache_key(self, request: Any, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class ThrottledObtainAuthToken(ObtainAuthToken):
    throttle_classes = [LoginRateThrottle]


class ThrottledLoginView(LoginView):
    """Django's login form; a POST over the budget answers 429 with the form and the wait."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        throttle = LoginRateThrottle()
        if throttle.allow_request(request, self):
            return super().post(request, *args, **kwargs)
        wait = throttle.wait()
        context = self.get_context_data(form=self.get_form_class()(request))
        context["throttled_s"] = int(wait or 60) + 1
        response = self.render_to_response(context)
        response.status_code = 429
        response["Retry-After"] = str(context["throttled_s"])
        return response


def throttle_posts(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """``view`` (the admin's login) with its POSTs counted in the same budget; 429 beyond."""

    @wraps(view)
    def guarded(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        throttle = LoginRateThrottle()
        if request.method != "POST" or throttle.allow_request(request, None):
            return view(request, *args, **kwargs)
        wait = int(throttle.wait() or 60) + 1
        response = HttpResponse(
            f"Too many login attempts from your address: try again in {wait} s.\n",
            status=429,
            content_type="text/plain",
        )
        response["Retry-After"] = str(wait)
        return response

    return guarded


obtain_auth_token = ThrottledObtainAuthToken.as_view()
login_view = ThrottledLoginView.as_view()
