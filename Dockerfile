# One image for every process of the product: `elastic-quota operator`, `elastic-quota webhook`
# (and `elastic-quota simulate`). The Helm chart runs it as user 65532 with a read-only root
# filesystem.
# Build: docker build -t elastic-quota .
ARG PYTHON=python:3.11.14-slim-bookworm

FROM ${PYTHON} AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY engine engine
COPY kit kit
COPY cli cli
COPY webhook webhook
COPY operator operator
# Wheels of the product and of its pinned dependencies, compiled here and not in the image.
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM ${PYTHON}
COPY --from=build /wheels /wheels
# Install, then remove pip itself: nothing in the running image can install or build anything.
# Compile every module (the standard library too: the base image ships none compiled) here, so
# that a start on the read-only root filesystem loads bytecode instead of compiling each import.
RUN pip install --no-cache-dir /wheels/*.whl \
    && rm -rf /wheels \
    && pip uninstall --yes pip setuptools wheel \
    && python -m compileall -q -j 0 /usr/local/lib/python3.11 \
    && useradd --uid 65532 --no-create-home --shell /usr/sbin/nologin elastic-quota
# No bytecode written at run time: it was all written at build time, and the root filesystem
# can be mounted read-only.
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
USER 65532:65532
# The webhook's HTTPS port, and both processes' /healthz, /readyz and /metrics.
EXPOSE 9443 8080
ENTRYPOINT ["elastic-quota"]
CMD ["--help"]
