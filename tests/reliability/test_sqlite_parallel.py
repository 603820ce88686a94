"""The embedded default survives parallel use: concurrent uploads into one SQLite file.

Run in a subprocess on a real SQLite *file* (the test database is in memory), with one
thread per upload as a threaded web server would: with deferred transactions these fail
with "database is locked"; WAL + IMMEDIATE transactions make them wait their turn.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import os, sys, threading, django
os.environ["DJANGO_SETTINGS_MODULE"] = "queuecast.settings"
django.setup()
from django.core.management import call_command
from django.db import connection
call_command("migrate", verbosity=0)
from traces.services import ingest_swf
from traces.models import Trace
from queuecast.reaper import reap

path = sys.argv[1]
errors = []
def upload(k):
    try:
        ingest_swf(path, name=f"parallel-{k}")
        reap()  # readers and the reaper beside the writers
    except Exception as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        connection.close()
def read_then_write(k):
    # The ORM's usual shape: read inside a transaction, then write (status pages, claims).
    from django.db import transaction
    try:
        for _ in range(30):
            with transaction.atomic():
                n = Trace.objects.count()
                Trace.objects.filter(name__startswith="parallel").update(description=str(n))
    except Exception as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        connection.close()
threads = [threading.Thread(target=upload, args=(k,)) for k in range(8)]
threads += [threading.Thread(target=read_then_write, args=(k,)) for k in range(4)]
[t.start() for t in threads]
[t.join() for t in threads]
print(Trace.objects.filter(status="done").count(), len(errors))
print("\\n".join(errors[:3]))
print(connection.cursor().execute("PRAGMA journal_mode").fetchone()[0])
"""


def test_parallel_uploads_into_one_sqlite_file_all_succeed(tmp_path) -> None:
    swf = tmp_path / "jobs.swf"
    lines = [f"{n} {n * 10} 0 100 4 -1 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1" for n in range(1, 20001)]
    swf.write_text("; Version: 2.2\n" + "\n".join(lines) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env.update(
        QUEUECAST_SQLITE_PATH=str(tmp_path / "db.sqlite3"),
        QUEUECAST_SECRET_KEY_FILE=str(tmp_path / "key"),
    )
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(swf)], cwd=ROOT, env=env,
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    counts, *rest = done.stdout.splitlines()
    assert counts == "8 0", "\n".join(rest)
    assert rest[-1] == "wal"
