"""Pages that belong to no app: the glossary every term on the other pages links to."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path

from queuecast import glossary


def glossary_page(request: HttpRequest) -> HttpResponse:
    """Every term the pages use, by section (public: definitions are no secret)."""
    return render(request, "glossary.html", {"nav": "glossary", "groups": glossary.by_group()})


urlpatterns = [path("glossary/", glossary_page, name="glossary")]
