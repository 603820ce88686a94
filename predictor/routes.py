"""Registers the predictor's API on the shared router."""

from predictor import api_evaluations, api_runtime, api_wait
from queuecast.router import router

for _module in (api_wait, api_runtime, api_evaluations):
    _module.register(router)
