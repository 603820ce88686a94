"""Shapes and type checks of the live-site API."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from holdqueue.core.directives import allow_list_problem
from holdqueue.models import Site, SiteJob
from holdqueue.services import backends
from holdqueue.services.backends import max_timeout_s
from predictor.core.wait.registry import FACTORIES as WAIT_FACTORIES
from predictor.serializers.why import WhySerializer
from queuecast.permissions import can_change
from traces.models import Trace

MAX_BEGIN_DAYS = 30  # a job held at its owner's request (``begin``): at most this far ahead
MAX_AHEAD_DAYS = 366  # a site prediction's ``at``: the queue then is a guess from now
QUEUE_READ_AT = (
    "When the batch queue this answer reads was asked: at most QUEUECAST_QUEUE_VIEW_S seconds "
    "of the site's clock before, and after every change Queuecast made to it."
)
SECRET_NAME = re.compile(
    r"^(QUEUECAST_|CELERY_|DJANGO_|SBATCH_|SLURM_|DATABASE_URL$)|SECRET|PASSW|TOKEN|(^|_)KEY$"
)


def absolute_path(value: str) -> str:
    if not value.startswith("/") or "\x00" in value:
        raise serializers.ValidationError(f"{value!r} is not an absolute path")
    return value


class AdviceConfigFields(serializers.Serializer):
    """Advice settings any site may carry (``holdqueue.services.decide.advice_config``)."""

    guard = serializers.FloatField(min_value=0.0, max_value=1.0, required=False)
    work_limit = serializers.FloatField(min_value=1.0, required=False)
    speedup_sigma = serializers.FloatField(min_value=0.0, max_value=100.0, required=False)
    speedup_a = serializers.FloatField(min_value=1.0, required=False, allow_null=True)


class SlurmConfigSerializer(AdviceConfigFields):
    """A ``slurm`` site's ``config``, each value checked by range."""

    slurm_conf = serializers.CharField(max_length=4096, required=False)
    timeout_s = serializers.FloatField(min_value=1.0, required=False)
    workdir = serializers.CharField(max_length=4096, required=False)
    submit_as_owner = serializers.BooleanField(required=False)
    accounting = serializers.ChoiceField(choices=["auto", "sacct", "controller"], required=False)
    export_env = serializers.ListField(
        child=serializers.RegexField(r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=100),
        max_length=50,
        required=False,
    )
    allowed_directives = serializers.ListField(
        child=serializers.CharField(max_length=64), max_length=100, required=False
    )

    def validate_slurm_conf(self, value: str) -> str:
        return absolute_path(value)

    def validate_workdir(self, value: str) -> str:
        return absolute_path(value)

    def validate_timeout_s(self, value: float) -> float:
        limit = max_timeout_s()
        if value > limit:
            raise serializers.ValidationError(
                f"at most {limit:g} s: half the submit lease (QUEUECAST_SUBMIT_LEASE_S), so a "
                "submission still in flight is never taken for a lost one"
            )
        return value

    def validate_export_env(self, value: list[str]) -> list[str]:
        secret = [n for n in value if SECRET_NAME.search(n.upper())]
        if secret:
            raise serializers.ValidationError(
                f"{', '.join(secret)}: the service's own settings and secrets never reach a job"
            )
        return value

    def validate_allowed_directives(self, value: list[str]) -> list[str]:
        problem = allow_list_problem(value)
        if problem:
            raise serializers.ValidationError(problem)
        return value


class SimulatedConfigSerializer(AdviceConfigFields):
    """A ``simulated`` site's ``config``: trace seconds per wall second, the share of its
    time limit a submitted job runs."""

    speed = serializers.FloatField(min_value=0.001, max_value=100_000.0, required=False)
    runtime_fraction = serializers.FloatField(min_value=0.01, max_value=1.0, required=False)


CONFIG_SERIALIZERS = {"slurm": SlurmConfigSerializer, "simulated": SimulatedConfigSerializer}


def checked_config(backend: str, config: dict[str, Any]) -> dict[str, Any]:
    """``config`` validated for ``backend`` (unknown keys and bad values named); 400 if bad."""
    form_class = CONFIG_SERIALIZERS[backend]
    known = list(form_class().fields)
    unknown = [k for k in config if k not in known]
    if unknown:
        raise serializers.ValidationError(
            {"config": f"unknown key {unknown[0]!r} for {backend} (known: {', '.join(known)})"}
        )
    form = form_class(data=config)
    if not form.is_valid():
        raise serializers.ValidationError(
            {"config": {k: [str(e) for e in v] for k, v in form.errors.items()}}
        )
    return dict(form.validated_data)


def max_time_limit() -> int:
    return getattr(settings, "QUEUECAST_MAX_TIME_LIMIT_S", 30 * 86400)


class SiteSerializer(serializers.ModelSerializer):
    """A site; its backend ``config`` (paths on the server) is shown to staff only."""

    history_jobs = serializers.IntegerField(read_only=True, source="history.count")
    run_note = serializers.SerializerMethodField(
        help_text="what a submitted job does here: on a simulated site the command is not "
        "run (empty on a real batch system)"
    )

    def get_run_note(self, site: Site) -> str:
        return backends.run_note(site)

    def to_representation(self, instance: Site) -> dict[str, Any]:
        data = super().to_representation(instance)
        request = self.context.get("request")
        if request is None or not request.user.is_staff:
            data["config"] = {}
            data["last_error"] = ""
        return data

    class Meta:
        model = Site
        fields = [
            "id",
            "name",
            "backend",
            "machine_procs",
            "partition",
            "config",
            "trace",
            "epoch",
            "synced_until",
            "created_at",
            "history_jobs",
            "run_note",
            "broken",
            "last_error",
            "error_count",
        ]
        read_only_fields = fields


class SiteCreateSerializer(serializers.Serializer):
    name = serializers.SlugField(max_length=100)
    backend = serializers.ChoiceField(choices=Site.BACKENDS)
    machine_procs = serializers.IntegerField(min_value=1, max_value=10_000_000, required=False)
    partition = serializers.CharField(max_length=100, required=False, default="", allow_blank=True)
    config = serializers.DictField(required=False, default=dict)
    trace = serializers.PrimaryKeyRelatedField(
        queryset=Trace.objects.all(), required=False, allow_null=True, default=None
    )
    warm_up = serializers.BooleanField(default=True)

    def validate_name(self, value: str) -> str:
        if Site.objects.filter(name=value).exists():
            raise serializers.ValidationError(f"a site called {value!r} exists")
        return value

    def validate_partition(self, value: str) -> str:
        if value and not re.match(r"^[A-Za-z0-9_.,-]+$", value):
            raise serializers.ValidationError("a Slurm partition name: letters, digits, _ . , -")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs["config"] = checked_config(attrs["backend"], attrs.get("config") or {})
        return attrs


class LiveStatusSerializer(serializers.Serializer):
    queue_length = serializers.IntegerField(read_only=True)
    running_jobs = serializers.IntegerField(read_only=True)
    busy_procs = serializers.IntegerField(read_only=True)
    utilisation = serializers.FloatField(read_only=True, allow_null=True)
    held_jobs = serializers.IntegerField(read_only=True)
    at = serializers.DateTimeField(read_only=True)
    queue_read_at = serializers.DateTimeField(read_only=True, help_text=QUEUE_READ_AT)


class SiteStatusSerializer(SiteSerializer, LiveStatusSerializer):
    """The site with its live status (the schema of ``GET /api/sites/{id}/``)."""

    class Meta(SiteSerializer.Meta):
        fields = [*SiteSerializer.Meta.fields, *LiveStatusSerializer._declared_fields]
        read_only_fields = fields


class LiveJobSerializer(serializers.Serializer):
    """A job in the batch queue; tag, name and user are blank unless it is yours (or you
    are staff)."""

    backend_job_id = serializers.CharField()
    mine = serializers.BooleanField(help_text="A Queuecast job of yours.")
    tag = serializers.CharField(allow_blank=True)
    name = serializers.CharField(allow_blank=True)
    user = serializers.CharField(allow_blank=True)
    procs = serializers.IntegerField()
    time_limit_s = serializers.FloatField(allow_null=True)
    state = serializers.CharField()
    backend_state = serializers.CharField()
    submitted_at = serializers.DateTimeField(allow_null=True)
    started_at = serializers.DateTimeField(allow_null=True)
    predicted_start = serializers.DateTimeField(allow_null=True, required=False)


class QueueSerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    queue_read_at = serializers.DateTimeField(help_text=QUEUE_READ_AT)
    machine_procs = serializers.IntegerField()
    jobs = LiveJobSerializer(many=True)


class PredictSerializer(serializers.Serializer):
    """A site prediction's question; ``context``: ``site`` (bounds ``procs``) and
    ``request`` (a user other than staff asks only for themself)."""

    procs = serializers.IntegerField(min_value=1, max_value=10_000_000)
    time_limit_s = serializers.IntegerField(min_value=1)
    user = serializers.CharField(max_length=150, required=False, allow_blank=True)
    at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    confidence = serializers.FloatField(min_value=0.5, max_value=0.99, default=0.9)
    within_s = serializers.FloatField(
        min_value=0.0, required=False, allow_null=True, default=None,
        help_text="Also answer the chance to start within this many seconds (`wait.within`).",
    )  # fmt: skip
    method = serializers.CharField(
        required=False,
        help_text="Answer with this wait method instead of the site's default (auto): "
        + ", ".join(sorted(WAIT_FACTORIES)),
    )

    def validate_method(self, value: str) -> str:
        if value not in WAIT_FACTORIES:
            raise serializers.ValidationError(f"one of {', '.join(sorted(WAIT_FACTORIES))}")
        return value

    def validate_procs(self, value: int) -> int:
        site = self.context.get("site")
        if site is not None and value > site.machine_procs:
            raise serializers.ValidationError(
                f"at most {site.machine_procs}: the processors of site {site.name}"
            )
        return value

    def validate_user(self, value: str) -> str:
        request = self.context.get("request")
        if value and request is not None and not request.user.is_staff:
            if value != request.user.get_username():
                raise serializers.ValidationError(
                    "you may ask only about your own jobs: leave user out (staff may name any user)"
                )
        return value

    def validate_time_limit_s(self, value: int) -> int:
        if value > max_time_limit():
            raise serializers.ValidationError(f"at most {max_time_limit()} s")
        return value

    def validate_at(self, value: dt.datetime | None) -> dt.datetime | None:
        if value is None:
            return value
        latest = timezone.now() + dt.timedelta(days=MAX_AHEAD_DAYS)
        if value > latest:
            raise serializers.ValidationError(
                f"at most {MAX_AHEAD_DAYS} days ahead: a live site predicts from its queue now"
            )
        return value


class JobCreateSerializer(serializers.Serializer):
    procs = serializers.IntegerField(min_value=1)
    time_limit_s = serializers.IntegerField(min_value=1)
    script = serializers.CharField(required=False, allow_blank=False, trim_whitespace=False)
    command = serializers.CharField(required=False, allow_blank=False, max_length=4096)
    name = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)
    mold = serializers.BooleanField(default=True)
    allow_delay = serializers.BooleanField(default=True)
    candidates = serializers.ListField(
        child=serializers.IntegerField(min_value=1), required=False, max_length=64
    )
    begin = serializers.DateTimeField(
        required=False,
        help_text="start no earlier than this time (as sbatch --begin): held until then, "
        "submitted as asked; a time already past submits now",
    )
    begin_in_s = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_BEGIN_DAYS * 86400,
        help_text="the same, as seconds from now",
    )

    def validate_time_limit_s(self, value: int) -> int:
        if value > max_time_limit():
            raise serializers.ValidationError(f"at most {max_time_limit()} s")
        return value

    def validate_begin(self, value: dt.datetime) -> dt.datetime:
        if value > timezone.now() + dt.timedelta(days=MAX_BEGIN_DAYS):
            raise serializers.ValidationError(f"at most {MAX_BEGIN_DAYS} days ahead")
        return value

    def validate_script(self, value: str) -> str:
        if not value.startswith("#!"):
            raise serializers.ValidationError("a batch script starts with '#!' (e.g. #!/bin/sh)")
        if "\x00" in value:
            raise serializers.ValidationError("the script contains a NUL byte")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if bool(attrs.get("script")) == bool(attrs.get("command")):
            raise serializers.ValidationError({"script": "give exactly one of script or command"})
        if attrs.get("begin") is not None and attrs.get("begin_in_s") is not None:
            raise serializers.ValidationError({"begin": "give at most one of begin or begin_in_s"})
        return attrs


class SiteJobSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    simulated_hold_s = serializers.SerializerMethodField(
        help_text="on a simulated site, how long the job holds its processors once started "
        "(the command is not run; the site's run_note); null on a real batch system"
    )

    def get_simulated_hold_s(self, job: SiteJob) -> float | None:
        return backends.simulated_hold_s(job.site, job.time_limit_s)

    class Meta:
        model = SiteJob
        fields = [
            "id",
            "site",
            "owner",
            "name",
            "state",
            "procs_requested",
            "procs_chosen",
            "time_limit_s",
            "simulated_hold_s",
            "mold",
            "allow_delay",
            "arrived_at",
            "release_at",
            "submitted_at",
            "started_at",
            "ended_at",
            "in_doubt",
            "backend_job_id",
            "backend_state",
            "tag",
            "decision",
            "error",
            "head",
        ]
        read_only_fields = fields


class SiteJobDetailSerializer(SiteJobSerializer):
    """One job with its ``why`` block: for a held job, what it waits for (its hold) and what
    releasing it now would give, as on its page (``holdqueue.services.predict.why_held``);
    null for a job that is not held or when the site cannot answer now."""

    why = serializers.SerializerMethodField()

    class Meta(SiteJobSerializer.Meta):
        fields = [*SiteJobSerializer.Meta.fields, "why"]
        read_only_fields = fields

    @extend_schema_field(WhySerializer(allow_null=True))
    def get_why(self, job: SiteJob) -> dict[str, Any] | None:
        return self.context.get("why")


class HeldJobSerializer(serializers.ModelSerializer):
    """A held job in the site's hold queue; owner and name only for the owner (and staff)."""

    owner = serializers.SerializerMethodField()
    name = serializers.SerializerMethodField()
    mine = serializers.SerializerMethodField()

    class Meta:
        model = SiteJob
        fields = ["id", "mine", "owner", "name", "procs_chosen", "arrived_at", "release_at", "head"]
        read_only_fields = fields

    def _sees(self, job: SiteJob) -> bool:
        return can_change(self.context["request"].user, job)

    def get_mine(self, job: SiteJob) -> bool:
        return job.owner_id == self.context["request"].user.pk

    def get_owner(self, job: SiteJob) -> str:
        return job.owner.username if self._sees(job) else ""

    def get_name(self, job: SiteJob) -> str:
        return job.name if self._sees(job) else ""


class SiteRangeSerializer(serializers.Serializer):
    low_s = serializers.FloatField()
    high_s = serializers.FloatField()
    probability = serializers.FloatField()


class SiteWaitSerializer(serializers.Serializer):
    point_s = serializers.FloatField()
    low_s = serializers.FloatField()
    high_s = serializers.FloatField(help_text="inf is sent as null: the interval is uncalibrated")
    confidence = serializers.FloatField()
    interval = serializers.DictField(
        help_text='where the interval was learnt: `from` "told" (the errors, wait minus told '
        "wait, of the `neighbours` jobs this site told a wait nearest this one, added to this "
        "one's, among those it told and saw start, "
        "online, the level corrected by their misses: `level_used`) or "
        '"fit" (the pool scored at the last fit, while fewer than 100 told jobs have '
        "started); `jobs`, `about`"
    )
    upper_bound_s = serializers.FloatField(allow_null=True)
    within = serializers.DictField(
        allow_null=True,
        help_text="with `within_s`: `p`, the chance to start within it (of the `jobs` told jobs "
        "whose told wait was nearest this one's, started or still waiting, the Kaplan-Meier "
        "chance to start within it, a waiting job counted as waiting at least as long as it "
        "has so far; null until 30 told jobs have started), `within_s`, `jobs`, `waiting` (of "
        "the jobs read, those still waiting), `about`; null when not asked",
    )
    history_s = serializers.FloatField(help_text="the estimate from the site's history")
    queue_s = serializers.FloatField(
        allow_null=True, help_text="EASY forward on the current queue with predicted runtimes"
    )
    rule = serializers.CharField(help_text="how point_s combines the two (docs/sites.md)")
    rule_reason = serializers.CharField(
        help_text="why this site uses that rule: each rule's error on its recent jobs"
    )


class SiteRuntimeSerializer(serializers.Serializer):
    point_s = serializers.FloatField()
    level = serializers.CharField()
    support = serializers.IntegerField()
    ranges = SiteRangeSerializer(many=True)


class SiteResponseSerializer(serializers.Serializer):
    point_s = serializers.FloatField()
    ranges = SiteRangeSerializer(many=True)


class SitePredictAnswerSerializer(serializers.Serializer):
    site = serializers.CharField()
    at = serializers.DateTimeField()
    queue_read_at = serializers.DateTimeField(help_text=QUEUE_READ_AT)
    procs = serializers.IntegerField()
    time_limit_s = serializers.IntegerField()
    predicted_start = serializers.DateTimeField()
    predicted_start_s = serializers.FloatField(help_text="seconds after `at`")
    predicted_end = serializers.DateTimeField()
    predicted_end_s = serializers.FloatField(help_text="seconds after `at`")
    wait = SiteWaitSerializer()
    runtime = SiteRuntimeSerializer()
    response = SiteResponseSerializer()
    method = serializers.DictField(child=serializers.CharField(allow_null=True))
    accuracy = serializers.DictField(
        help_text="How the methods did here: scored at the site's last fit on its last finished "
        "jobs (`wait`, `runtime`, `headline`, ...), and `told`: the last 200 jobs submitted "
        "through the site that have started, each against the wait it was told (null until 30 "
        "have started)."
    )
    why = WhySerializer(help_text="Why it waits and what single change starts it sooner.")
