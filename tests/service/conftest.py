"""Service tests answer with APQ and the seed's rangeSet unless a test asks for the service's
default methods (``auto`` and the chosen runtime method cost a minute per fit on a site's
history; tests/service/test_method_choice.py covers them)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def fast_service_methods(settings):
    settings.QUEUECAST_SERVICE_WAIT_METHOD = "apq"
    settings.QUEUECAST_SERVICE_RUNTIME_METHOD = "rangeset"
