"""The API's JSON parser: a body nested too deeply is a 400, not a ``RecursionError`` 500.

CPython's ``json`` decoder recurses once per ``[`` or ``{``; a body of 100,000 brackets
(200 KB) exhausts the interpreter's stack. The decoder stops cleanly with
``RecursionError`` at the recursion limit (1,000 frames by default), so bodies nested
deeper than that are refused with a message; no view takes anything nested that deep.
"""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


class BoundedJSONParser(JSONParser):
    """DRF's ``JSONParser`` with a clear 400 for a body nested too deeply."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError as exc:
            raise ParseError(
                "JSON parse error: the body is nested too deeply ([ or { more than about "
                "1000 levels); send a flat object"
            ) from exc
