"""Which cluster account a job runs as: the service's own, or (a site with
``config.submit_as_owner``) the account its owner is mapped to in :class:`ClusterAccount`.

A Queuecast username never reaches ``sbatch --uid``: a user named ``0`` or ``root`` would
otherwise run jobs as root. Without a mapping the user cannot submit to such a site.
"""

from __future__ import annotations

from typing import Any

from rest_framework import status

from holdqueue.core.backends.slurm import account_problem
from holdqueue.models import ClusterAccount, Site
from holdqueue.services.errors import BadJob
from queuecast.errors import QueuecastError


class NoClusterAccount(QueuecastError):
    """The site runs jobs as their owners, and this user has no account mapped there."""

    status_code = status.HTTP_403_FORBIDDEN


def submits_as_owner(site: Site) -> bool:
    return site.backend == "slurm" and bool((site.config or {}).get("submit_as_owner"))


def run_as(site: Site, user: Any) -> str:
    """The account ``user``'s job runs as at ``site`` ('' = the service's account)."""
    if not submits_as_owner(site):
        return ""
    row = ClusterAccount.objects.filter(site=site, user=user).first()
    if row is None:
        raise NoClusterAccount(
            f"site {site.name} runs each job as its owner's cluster account, and "
            f"{user.get_username()!r} has none mapped there: ask the site's staff "
            "(manage.py cluster_account)",
            field="user",
        )
    problem = account_problem(row.account)
    if problem:
        raise BadJob(f"the cluster account mapped to you is unusable: {problem}", field="user")
    return row.account
