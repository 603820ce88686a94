"""Who may do what with a trace: any logged-in user reads, the owner or staff change."""

from __future__ import annotations

from rest_framework.permissions import SAFE_METHODS, BasePermission


def can_change(user, trace) -> bool:
    """The one rule, shared by the API and the pages."""
    return bool(user and user.is_authenticated and (user.is_staff or trace.owner_id == user.pk))


class IsOwnerOrStaffToChange(BasePermission):
    message = "Only the trace's owner or a staff user may change or delete it."

    def has_permission(self, request, view) -> bool:
        return bool(request.user and request.user.is_authenticated)

    def has_object_permission(self, request, view, obj) -> bool:
        return request.method in SAFE_METHODS or can_change(request.user, obj)
