"""The ``why`` block of a wait answer (``predictor.services.why``): shape and help texts."""

from __future__ import annotations

from rest_framework import serializers


class QueuedAheadSerializer(serializers.Serializer):
    position = serializers.IntegerField(help_text="1 = the head of the queue.")
    procs = serializers.IntegerField(help_text="Processors it requests.")
    predicted_start_s = serializers.FloatField(help_text="Seconds from the request's arrival.")
    predicted_end_s = serializers.FloatField(help_text="Start + its time limit, seconds.")


class RunningAheadSerializer(serializers.Serializer):
    procs = serializers.IntegerField(help_text="Processors it holds.")
    predicted_end_s = serializers.FloatField(help_text="Start + its time limit, from arrival.")


class JobsAheadSerializer(serializers.Serializer):
    queued = serializers.IntegerField(help_text="Jobs queued ahead of the request.")
    queued_procs = serializers.IntegerField(help_text="Processors they request.")
    running = serializers.IntegerField(help_text="Jobs running.")
    running_procs = serializers.IntegerField(help_text="Processors they hold.")
    queued_jobs = QueuedAheadSerializer(many=True, help_text="The first 10, in arrival order.")
    running_jobs = RunningAheadSerializer(many=True, help_text="The first 10 to end.")


class ChangeSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text="fewer_procs, shorter_limit or later_submission")
    procs = serializers.IntegerField()
    time_limit_s = serializers.FloatField()
    delay_s = serializers.FloatField(help_text="How much later it is submitted, seconds.")
    predicted_start_s = serializers.FloatField(help_text="Seconds from the original arrival.")
    saved_s = serializers.FloatField(help_text="How much sooner it starts, seconds.")
    sentence = serializers.CharField()


class SoonerSerializer(serializers.Serializer):
    best = ChangeSerializer(allow_null=True, help_text="The change that saves most.")
    fewer_procs = ChangeSerializer(allow_null=True)
    shorter_limit = ChangeSerializer(allow_null=True)
    later_submission = ChangeSerializer(allow_null=True)
    sentence = serializers.CharField()


class WhySerializer(serializers.Serializer):
    reason = serializers.ChoiceField(
        choices=["hold", "nothing", "processors", "jobs_ahead"],
        help_text="What it waits for: a hold, nothing, processors, or the jobs queued ahead.",
    )
    sentence = serializers.CharField()
    estimate_note = serializers.CharField(
        allow_null=True,
        help_text="Why the predicted wait differs from this queue's start, when it differs by "
        "more than 5 minutes and 25% of the larger (the sentence ends with it); else null.",
    )
    predicted_start_s = serializers.FloatField(
        help_text="Its start in the EASY forward, seconds from arrival (the wait method's "
        "point may differ: it learns from history)."
    )
    procs = serializers.IntegerField()
    free_procs = serializers.IntegerField(help_text="Processors free at its arrival.")
    jobs_ahead = JobsAheadSerializer()
    sooner = SoonerSerializer()
    how = serializers.CharField()
