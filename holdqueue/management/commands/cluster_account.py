"""``manage.py cluster_account SITE USER ACCOUNT``: map a Queuecast user to the cluster
account their jobs run as at a site that submits as each owner (``submit_as_owner``).

``--remove`` deletes the mapping (the user can then no longer submit there); ``--list``
prints the site's table. The account is checked: a POSIX name, never a number, never root.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from holdqueue.models import ClusterAccount, Site


class Command(BaseCommand):
    help = "Map a user to the cluster account their jobs run as at a site (submit_as_owner)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("site")
        parser.add_argument("user", nargs="?")
        parser.add_argument("account", nargs="?")
        parser.add_argument("--remove", action="store_true", help="delete USER's mapping")
        parser.add_argument("--list", action="store_true", help="print the site's mappings")

    def handle(self, *args: Any, **opts: Any) -> None:
        site = Site.objects.filter(name=opts["site"]).first()
        if site is None:
            raise CommandError(f"no site called {opts['site']!r}")
        if opts["list"]:
            for row in ClusterAccount.objects.filter(site=site).select_related("user"):
                self.stdout.write(f"{row.user.get_username()} -> {row.account}")
            return
        if not opts["user"]:
            raise CommandError("give USER (and ACCOUNT), or --list")
        user = get_user_model().objects.filter(username=opts["user"]).first()
        if user is None:
            raise CommandError(f"no user called {opts['user']!r}")
        if opts["remove"]:
            gone, _ = ClusterAccount.objects.filter(site=site, user=user).delete()
            self.stdout.write(f"removed {gone} mapping(s)")
            return
        if not opts["account"]:
            raise CommandError("give the cluster ACCOUNT")
        row = ClusterAccount.objects.filter(site=site, user=user).first() or ClusterAccount(
            site=site, user=user
        )
        row.account = opts["account"]
        try:
            row.full_clean()
        except ValidationError as exc:
            raise CommandError(f"account {opts['account']!r}: {'; '.join(exc.messages)}") from exc
        row.save()
        self.stdout.write(f"{user.get_username()} -> {row.account} at {site.name}")
