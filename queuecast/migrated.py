"""A command that stores what it computed checks, before it computes, that the database has
every migration applied: a long run that fails at its end on a missing table loses its work."""

from __future__ import annotations

from django.core.management.base import CommandError
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor


def require_migrated(command: str, database: str = DEFAULT_DB_ALIAS) -> None:
    """``CommandError`` naming the unapplied migrations' apps and the command that applies
    them, when the database is behind the code."""
    executor = MigrationExecutor(connections[database])
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if plan:
        apps = sorted({migration.app_label for migration, _ in plan})
        raise CommandError(
            f"{command}: the database lacks {len(plan)} migration(s) of {', '.join(apps)}, and "
            "this command stores its result there: run `python manage.py migrate` first"
        )
