"""Shapes of the runtime-prediction API (requests checked against the trace)."""

from __future__ import annotations

from rest_framework import serializers

from predictor.core.runtime.registry import METHODS as RUNTIME_METHODS
from predictor.serializers.job import JobQuerySerializer


class RuntimeQuerySerializer(JobQuerySerializer):
    """A job whose runtime is asked for (see :class:`JobQuerySerializer`)."""

    method = serializers.CharField(
        required=False,
        help_text="Answer with this runtime method instead of the one chosen for the trace: "
        + ", ".join(RUNTIME_METHODS),
    )

    def validate_method(self, value: str) -> str:
        if value not in RUNTIME_METHODS:
            raise serializers.ValidationError(f"one of {', '.join(RUNTIME_METHODS)}")
        return value


class RangeSerializer(serializers.Serializer):
    low_s = serializers.FloatField()
    high_s = serializers.FloatField()
    probability = serializers.FloatField()


class RuntimeAnswerSerializer(serializers.Serializer):
    ranges = RangeSerializer(many=True, help_text="Disjoint runtime ranges, sorted by low_s.")
    point_s = serializers.FloatField(help_text="sum of probability x range median, seconds.")
    level = serializers.CharField(
        help_text="History level that answered: tuple (the request's user, size, queue, "
        "group), else the fallbacks user, size, all, or none (no finished job yet)."
    )
    method = serializers.CharField(help_text="The runtime method that answered (rangeset).")
    support = serializers.IntegerField(help_text="Relevant history jobs behind the ranges.")
    at = serializers.FloatField()
    methods = serializers.DictField(help_text="Both methods, and how the runtime one was chosen.")
    accuracy = serializers.DictField(
        help_text="The runtime method's success and coverage on the most recent ended jobs, "
        "beside the requested time's."
    )


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
