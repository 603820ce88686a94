"""One serializer instance per answer shape, reused to write every answer of that shape.

Building a DRF serializer deep-copies its declared fields (``Serializer.fields``): a
prediction's answer, with its nested ``why`` block and rangeSets, cost about 1.5 CPU-ms per
request to build before it wrote one value (issue 18, docs/results.md "Sixth round"). An
output-only serializer keeps no per-call state in ``to_representation`` (no context, no
instance, no errors), so one instance per class serves every request and every thread, and
writes the same body as ``Serializer(value).data``.
"""

from __future__ import annotations

import threading
from typing import Any

from rest_framework import serializers

_INSTANCES: dict[type[serializers.Serializer], serializers.Serializer] = {}
_LOCK = threading.Lock()


def represent(serializer_class: type[serializers.Serializer], value: Any) -> dict[str, Any]:
    """``serializer_class(value).data`` for an output-only serializer (one that reads no
    ``context``), written by this process's one instance of the class."""
    writer = _INSTANCES.get(serializer_class)
    if writer is None:
        with _LOCK:
            writer = _INSTANCES.get(serializer_class)
            if writer is None:
                writer = serializer_class()
                _ = writer.fields  # built once, before any thread reads it
                _INSTANCES[serializer_class] = writer
    return writer.to_representation(value)
