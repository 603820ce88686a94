"""Make the OpenAPI schema tell the truth about error status codes.

drf-spectacular documents the success response of each operation; the errors every
operation can answer come from the project-wide rules, so they are added here once
(a postprocessing hook), and schemathesis checks that no other status code appears.
"""

from __future__ import annotations

from typing import Any

ERROR = {"$ref": "#/components/schemas/Error"}
ERROR_SCHEMA = {
    "type": "object",
    "description": "DRF's error shape: ``detail`` and, for bad input, the field's messages.",
    "properties": {"detail": {"type": "string"}},
    "additionalProperties": True,
}
REASONS = {
    "400": "Bad input: the body names the field, line or range.",
    "401": "Not logged in.",
    "403": "Logged in but not allowed (owner or staff only).",
    "404": "No such object, or not yours to see.",
    "409": "Conflict with the object's state (name taken, trace not done, quota).",
    "413": "Body or file over a size limit (QUEUECAST_MAX_UPLOAD_MB, job/line limits).",
    "415": "The body's media type is not one the endpoint reads (JSON, or a multipart upload).",
    "429": "Too many attempts (throttled).",
    "503": "A dependency is down (the task queue); nothing was started.",
}


def error_codes(path: str, method: str, operation: dict[str, Any]) -> list[str]:
    if path.startswith("/api/token"):
        return ["400", "429"]
    codes = ["401", "403"]
    if "{" in path:
        codes.append("404")
    if method in ("post", "put", "patch"):
        codes += ["400", "409", "413", "415", "503"]
    query = [p.get("name") for p in operation.get("parameters", []) if p.get("in") == "query"]
    if query and method == "get":
        codes.append("400")
    if "page" in query and "404" not in codes:
        codes.append("404")  # a page past the end: DRF's pagination answers "Invalid page."
    if method == "delete":
        codes.append("409")
    return codes


def document_error_responses(result: dict[str, Any], generator, request, public) -> dict:
    """drf-spectacular postprocessing hook (SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"])."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            for code in error_codes(path, method, operation):
                operation["responses"].setdefault(
                    code,
                    {
                        "description": REASONS[code],
                        "content": {"application/json": {"schema": ERROR}},
                    },
                )
    return result
