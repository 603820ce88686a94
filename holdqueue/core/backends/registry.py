"""Pick a backend by name (``Site.backend``): one module per implementation."""

from __future__ import annotations

from typing import Any

from holdqueue.core.backends.base import Backend
from holdqueue.core.backends.simulated import SimulatedBackend
from holdqueue.core.backends.slurm import SlurmBackend

BACKENDS: dict[str, type[Backend]] = {"slurm": SlurmBackend, "simulated": SimulatedBackend}


def make_backend(kind: str, **config: Any) -> Backend:
    """The backend called ``kind`` (``slurm`` or ``simulated``) with its keyword config."""
    if kind not in BACKENDS:
        raise ValueError(f"backend must be 'slurm' or 'simulated', got {kind!r}")
    return BACKENDS[kind](**config)
