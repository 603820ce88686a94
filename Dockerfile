# Image for the web service and the Celery worker (see docker-compose.yml).
# Everything runs as the unprivileged account `queuecast` (uid 10001), never root: the
# Slurm client tools it calls submit jobs as that account (docs/sites.md, "Who runs what").
FROM python:3.11-slim
ENV VENV=/opt/venv PYTHONUNBUFFERED=1 QUEUECAST_CACHE_DIR=/data/state/cache
RUN groupadd --system --gid 10001 queuecast \
 && useradd --system --uid 10001 --gid queuecast --home-dir /app --shell /usr/sbin/nologin queuecast
WORKDIR /app
COPY pyproject.toml README.md ./
COPY . .
# The venv is built as root and stays read-only to the service; the service writes only the
# collected static files, the uploads volume and the key/schedule files it is pointed at.
RUN bash -c "source scripts/_venv.sh" \
 && mkdir -p /app/staticfiles /data/uploads /data/state \
 && chown -R queuecast:queuecast /app/staticfiles /data
USER queuecast:queuecast
EXPOSE 8000
CMD ["scripts/serve"]
