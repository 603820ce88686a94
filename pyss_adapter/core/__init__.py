"""The simulator's numeric core: no Django, DRF or Celery here (style.md)."""
