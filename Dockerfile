# Image for the web service and the Celery worker (see docker-compose.yml).
FROM python:3.11-slim
WORKDIR /app
ENV VENV=/opt/venv PYTHONUNBUFFERED=1
COPY pyproject.toml README.md ./
COPY . .
RUN bash -c "source scripts/_venv.sh"
EXPOSE 8000
CMD ["scripts/serve"]
