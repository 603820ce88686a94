"""Who may do what with a trace: any logged-in user reads, the owner or staff change.

The rule is the one every app uses (``queuecast.permissions``); kept under this name for
the traces app's views and pages.
"""

from queuecast.permissions import IsOwnerOrStaffToChange, can_change

__all__ = ["IsOwnerOrStaffToChange", "can_change"]
