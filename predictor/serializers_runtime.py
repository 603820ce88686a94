"""Shapes of the runtime-prediction API (requests checked against the trace)."""

from __future__ import annotations

from rest_framework import serializers


class RuntimeQuerySerializer(serializers.Serializer):
    """A job to predict for, submitted at ``at`` (seconds since the trace start).

    The view passes the trace in the context: processors are checked against its machine
    size and ``at`` against its span of submit times.
    """

    user_id = serializers.IntegerField(min_value=-1)
    group_id = serializers.IntegerField(min_value=-1, required=False, default=-1)
    queue_id = serializers.IntegerField(min_value=-1, required=False, default=-1)
    requested_procs = serializers.IntegerField(min_value=1)
    requested_time = serializers.FloatField(min_value=0.0, help_text="Seconds requested.")
    at = serializers.FloatField(min_value=0.0, help_text="Submit time, seconds since trace start.")

    def validate_requested_procs(self, value: int) -> int:
        size = self.context["trace"].machine_procs
        if size and value > size:
            raise serializers.ValidationError(
                f"must be at most the machine size, {size} processors"
            )
        return value

    def validate_at(self, value: float) -> float:
        trace = self.context["trace"]
        lo, hi = trace.first_submit_s, trace.last_submit_s
        if lo is not None and hi is not None and not lo <= value <= hi:
            raise serializers.ValidationError(f"must lie in the trace's span [{lo:g}, {hi:g}] s")
        return value


class RangeSerializer(serializers.Serializer):
    low_s = serializers.FloatField()
    high_s = serializers.FloatField()
    probability = serializers.FloatField()


class RuntimeAnswerSerializer(serializers.Serializer):
    ranges = RangeSerializer(many=True, help_text="Disjoint runtime ranges, sorted by low_s.")
    point_s = serializers.FloatField(help_text="sum of probability x range median, seconds.")
    level = serializers.CharField(help_text="History level used: tuple, user, size, all, none.")
    support = serializers.IntegerField(help_text="Relevant history jobs behind the ranges.")
    at = serializers.FloatField()


class ChainPointSerializer(serializers.Serializer):
    load = serializers.FloatField()
    runtime_s = serializers.FloatField()


class LoadFunctionSerializer(serializers.Serializer):
    tuple = serializers.DictField(child=serializers.IntegerField())
    slope = serializers.FloatField(help_text="Seconds of runtime per unit of load.")
    intercept = serializers.FloatField(help_text="Runtime at load 0, seconds.")
    n_jobs = serializers.IntegerField()
    chain = ChainPointSerializer(many=True)


class LoadFunctionsSerializer(serializers.Serializer):
    tune_jobs = serializers.IntegerField()
    machine_procs = serializers.FloatField()
    functions = LoadFunctionSerializer(many=True)
