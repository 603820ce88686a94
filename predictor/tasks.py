"""Celery tasks of the predictor (discovered by name ``tasks``)."""

from predictor.tasks_runtime import *  # noqa: F401,F403
from predictor.tasks_wait import *  # noqa: F401,F403
