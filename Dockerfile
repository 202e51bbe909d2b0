# One image for every process of the product: `elastic-quota operator`, `elastic-quota webhook`
# (and `elastic-quota simulate`).
# Build: docker build -t elastic-quota .
FROM python:3.11.14-slim-bookworm AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY engine engine
COPY kit kit
COPY cli cli
COPY webhook webhook
COPY operator operator
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11.14-slim-bookworm
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-compile /wheels/*.whl && rm -rf /wheels \
    && useradd --uid 65532 --no-create-home --shell /usr/sbin/nologin elastic-quota
# No bytecode written at run time: the root filesystem can be mounted read-only.
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
USER 65532:65532
ENTRYPOINT ["elastic-quota"]
CMD ["--help"]
