"""The job a prediction is asked for: one shape for the wait and runtime APIs."""

from __future__ import annotations

from rest_framework import serializers

from traces.core.swf_limits import FIELD_RANGES

# The ranges a trace's own fields have (traces.core.swf_limits): a larger id, size or time
# cannot match any job, and would overflow the predictors' 64-bit columns.
_ID_MAX = int(FIELD_RANGES["user_id"][1])
_PROCS_MAX = int(FIELD_RANGES["requested_procs"][1])
_SECONDS_MAX = float(FIELD_RANGES["requested_time"][1])


class JobQuerySerializer(serializers.Serializer):
    """A job to predict for, submitted at ``at`` (seconds since the trace start).

    The view passes the trace in the context; processors are checked against its machine
    size and ``at`` against its span of submit times.
    """

    user_id = serializers.IntegerField(min_value=-1, max_value=_ID_MAX)
    group_id = serializers.IntegerField(min_value=-1, max_value=_ID_MAX, required=False, default=-1)
    queue_id = serializers.IntegerField(min_value=-1, max_value=_ID_MAX, required=False, default=-1)
    requested_procs = serializers.IntegerField(min_value=1, max_value=_PROCS_MAX)
    requested_time = serializers.FloatField(
        min_value=0.0, max_value=_SECONDS_MAX, help_text="Seconds requested."
    )
    at = serializers.FloatField(
        min_value=0.0, max_value=_SECONDS_MAX, help_text="Submit time, seconds since trace start."
    )

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
