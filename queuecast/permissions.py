"""Who may see and change what: the two rules every app uses (docs/operations.md).

- Read: a user sees the rows they own (runs, replays, molding runs, site jobs), staff see
  all: :func:`visible_to`. Traces are the exception: every logged-in user reads them.
- Change: the owner or a staff user changes or deletes a row: :func:`can_change`, and
  :class:`IsOwnerOrStaffToChange` for the API's viewsets.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from rest_framework.permissions import SAFE_METHODS, BasePermission


def visible_to(rows: QuerySet, user: Any) -> QuerySet:
    """The one read rule of owned rows: the owner's, or every row for staff."""
    return rows if user.is_staff else rows.filter(owner=user)


def can_change(user: Any, obj: Any) -> bool:
    """The one change rule, shared by the API and the pages: the owner or staff."""
    return bool(user and user.is_authenticated and (user.is_staff or obj.owner_id == user.pk))


class IsOwnerOrStaffToChange(BasePermission):
    """Logged-in users read; the owner or a staff user changes or deletes."""

    message = "Only the owner or a staff user may change or delete it."

    def has_permission(self, request: Any, view: Any) -> bool:
        return bool(request.user and request.user.is_authenticated)

    def has_object_permission(self, request: Any, view: Any, obj: Any) -> bool:
        if request.method in SAFE_METHODS or can_change(request.user, obj):
            return True
        # DRF makes one permission object per request: naming the row here is safe.
        noun = obj._meta.verbose_name
        self.message = f"Only the {noun}'s owner or a staff user may change or delete it."
        return False
