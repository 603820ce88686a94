"""Registers the predictor's API on the shared router."""

from predictor.api import evaluations, runtime, wait
from queuecast.router import router

for _module in (wait, runtime, evaluations):
    _module.register(router)
