"""The demo set-up used by scripts/serve: a user and a synthetic trace with waits."""

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from traces.models import Job, Trace


@pytest.mark.django_db
def test_demo_setup_creates_user_and_trace_with_simulated_waits() -> None:
    call_command("demo_setup", "--jobs", "300", "--procs", "64", "--with-user", verbosity=0)
    trace = Trace.objects.get(name="demo-lublin")
    assert trace.status == "done" and trace.job_count == 300 and trace.machine_procs == 64
    assert trace.source == "generated:demo-lublin"  # not the deleted temporary file
    waits = list(Job.objects.filter(trace=trace).values_list("wait_time", flat=True))
    assert min(waits) >= 0 and max(waits) > 0
    assert authenticate(username="demo", password="demo-password") is not None


@pytest.mark.django_db
def test_demo_setup_is_idempotent() -> None:
    call_command("demo_setup", "--jobs", "200", verbosity=0)
    call_command("demo_setup", "--jobs", "200", verbosity=0)
    assert Trace.objects.filter(name="demo-lublin").count() == 1


@pytest.mark.django_db
def test_demo_setup_creates_no_user_unless_asked() -> None:
    call_command("demo_setup", "--jobs", "200", verbosity=0)
    assert Trace.objects.get(name="demo-lublin").owner is None
    assert authenticate(username="demo", password="demo-password") is None
