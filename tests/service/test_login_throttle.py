"""Login throttling: by the real client address, on both login paths, shared by processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.cache import caches
from django.test import Client
from rest_framework.test import APIClient

from queuecast.client_address import client_address, proxy_networks
from tests.service.traces_support import make_user

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def private_counts(settings, tmp_path):
    """Counts in a fresh file cache (the embedded default's backend), 10 per minute; a
    cheap password hash (each attempt checks one)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.CACHES = {
        **settings.CACHES,
        "throttle": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(tmp_path / "throttle"),
        },
    }
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"login": "10/min"},
    }
    yield tmp_path
    caches["throttle"].clear()


@pytest.fixture
def bob():
    return make_user("bob", password="right-password")


def token_attempt(ip: str = "203.0.113.7", forwarded: str | None = None) -> int:
    client = APIClient(REMOTE_ADDR=ip)
    headers = {"X-Forwarded-For": forwarded} if forwarded else {}
    body = {"username": "bob", "password": "guess"}
    return client.post("/api/token/", body, headers=headers).status_code


def test_a_forged_forwarded_for_does_not_bypass_the_token_throttle(bob) -> None:
    codes = [token_attempt(forwarded=f"198.51.100.{k}") for k in range(12)]
    assert codes[:10] == [400] * 10 and codes[10:] == [429, 429]
    assert token_attempt(ip="203.0.113.8") == 400  # another address has its own budget


def test_a_trusted_proxy_forwards_the_client_address(bob, settings) -> None:
    settings.QUEUECAST_TRUSTED_PROXIES = ["127.0.0.0/8"]
    through_proxy = [token_attempt("127.0.0.1", f"198.51.100.{k}") for k in range(12)]
    assert through_proxy == [400] * 12  # twelve clients behind one proxy, one try each
    forged = [token_attempt("127.0.0.1", f"10.9.9.{k}, 198.51.100.200") for k in range(11)]
    assert forged[-1] == 429  # what the client prepended is never reached


def test_client_address_reads_forwarded_for_only_from_trusted_peers() -> None:
    nets = proxy_networks(["10.0.0.0/8", "::1"])
    meta = {"REMOTE_ADDR": "10.1.2.3", "HTTP_X_FORWARDED_FOR": "1.1.1.1, 2.2.2.2, 10.0.0.5"}
    assert client_address(meta, nets) == "2.2.2.2"
    assert client_address({**meta, "REMOTE_ADDR": "8.8.8.8"}, nets) == "8.8.8.8"
    assert client_address(meta, []) == "10.1.2.3"
    with pytest.raises(ValueError, match="QUEUECAST_TRUSTED_PROXIES"):
        proxy_networks(["not-an-address"])


def test_the_html_login_is_throttled_with_the_token_endpoint(bob) -> None:
    browser = Client(REMOTE_ADDR="203.0.113.9")
    body = {"username": "bob", "password": "guess"}
    codes = [browser.post("/accounts/login/", body).status_code for _ in range(10)]
    assert codes == [200] * 10  # the form again, with "did not match"
    refused = browser.post("/accounts/login/", {"username": "bob", "password": "right-password"})
    assert refused.status_code == 429 and "Too many login attempts" in refused.content.decode()
    assert int(refused["Retry-After"]) > 0 and "_auth_user_id" not in browser.session
    assert token_attempt(ip="203.0.113.9") == 429  # one budget for both paths
    assert browser.get("/accounts/login/").status_code == 200  # the page itself is not limited


def test_the_count_is_shared_with_another_process(bob, private_counts) -> None:
    script = (
        "import django; django.setup()\n"
        "from django.test import RequestFactory\n"
        "from queuecast.auth import LoginRateThrottle\n"
        "request = RequestFactory().post('/accounts/login/', REMOTE_ADDR='203.0.113.10')\n"
        "assert all(LoginRateThrottle().allow_request(request, None) for _ in range(10))\n"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "queuecast.settings",
        "QUEUECAST_CACHE_DIR": str(private_counts),
        "QUEUECAST_LOGIN_RATE": "10/min",
        "QUEUECAST_SQLITE_PATH": str(private_counts / "other.sqlite3"),
        "QUEUECAST_ALLOWED_HOSTS": "testserver",
    }
    env.pop("DATABASE_URL", None)
    env.pop("CELERY_BROKER_URL", None)
    env.pop("QUEUECAST_CACHE_URL", None)
    subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, check=True, timeout=120)
    assert token_attempt(ip="203.0.113.10") == 429


def test_the_admin_login_is_throttled_in_the_same_budget(bob) -> None:
    browser = Client(REMOTE_ADDR="203.0.113.11")
    body = {"username": "bob", "password": "guess"}
    codes = [browser.post("/admin/login/", body).status_code for _ in range(11)]
    assert codes[:10] == [200] * 10 and codes[10] == 429
    assert browser.post("/accounts/login/", body).status_code == 429
    assert browser.get("/admin/login/").status_code == 200
