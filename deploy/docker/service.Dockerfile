# syntax=docker/dockerfile:1
# The image of the API and the worker: compiled JavaScript (npm run build → dist/, with the prebuilt
# workflow bundle), production node_modules only, non-root. One image, two commands:
#
#   API:    node dist/api.js      (the default command; listens on API_PORT, 9888)
#   worker: node dist/worker.js
#
#   docker build -f deploy/docker/service.Dockerfile -t spark-orchestrator:dev .
#
# Targets:
#   runtime        (the default, last stage) for k8s clusters: Spark runs in driver pods, not here.
#   runtime-spark  the same plus Java, Spark and the runner, for a worker that also serves `local`
#                  clusters (spark-submit --master local[N] beside it, as on the dev stack). It starts
#                  FROM the driver image, passed as the build context `spark-driver`:
#     docker build -f deploy/docker/service.Dockerfile --target runtime-spark \
#       --build-context spark-driver=docker-image://spark-orchestrator-driver:dev -t spark-orchestrator-spark:dev .
#   (temporal-dev.yml does this with additional_contexts.)
ARG BUILD_IMAGE=node:20.19-bookworm
ARG NODE_IMAGE=node:20.19-bookworm-slim

# ── compile ──────────────────────────────────────────────────────────────────────────────
FROM ${BUILD_IMAGE} AS build
WORKDIR /app
# npm install, not npm ci: the lock file lacks @swc/core's per-platform packages that some registries do not serve (see README), which npm ci refuses; npm install still installs the locked versions.
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY . .
RUN npm run build \
 && test -f dist/api.js && test -f dist/connect-gateway.js && test -f dist/worker.js && test -f dist/workflow-bundle.js && test -f dist/console/index.html

# ── production dependencies ──────────────────────────────────────────────────────────────
FROM ${BUILD_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund && npm cache clean --force

# ── the node runtime both targets share ──────────────────────────────────────────────────
FROM ${NODE_IMAGE} AS node

# ── worker with local Spark (optional target) ────────────────────────────────────────────
FROM spark-driver AS runtime-spark
USER root
# venv: the local adapter builds one per distinct pyRequirements list (python -m venv).
RUN set -eux; apt-get update; apt-get install -y --no-install-recommends python3-venv; rm -rf /var/lib/apt/lists/*
COPY --from=node /usr/local/bin/node /usr/local/bin/node
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY deploy/docker/healthcheck.mjs ./healthcheck.mjs
# The local adapter starts <root>/runner/runner.py (root: the folder above dist/); the driver image has the runner already.
RUN set -eux; ln -s /opt/spark-orchestrator/runner runner; \
    mkdir -p /var/lib/spark-orchestrator; chown 185:185 /var/lib/spark-orchestrator
# HOME: the spark user's is /nonexistent, and spark-submit --packages resolves into ~/.ivy2.
ENV NODE_ENV=production LOG_FORMAT=json STACK_DIR=/var/lib/spark-orchestrator \
    SPARK_HOME=/opt/spark PYTHON=/usr/bin/python3 HOME=/tmp
VOLUME /var/lib/spark-orchestrator
USER 185:185
EXPOSE 9888
# tini reaps the spark-submit processes a killed driver leaves behind.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/worker.js"]

# ── API and worker for k8s clusters (default target) ─────────────────────────────────────
FROM node AS runtime
RUN set -eux; apt-get update; apt-get install -y --no-install-recommends tini; rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# "type": "module": dist/ is ES modules.
COPY package.json ./
COPY deploy/docker/healthcheck.mjs ./healthcheck.mjs
# uid/gid 185 as in the Spark images (runtime-spark, the driver): API and worker containers can share
# one state volume (uploads, artifacts) whichever image each runs.
RUN set -eux; groupadd --system --gid 185 orchestrator; \
    useradd --system --uid 185 --gid 185 --home-dir /nonexistent --shell /usr/sbin/nologin orchestrator; \
    mkdir -p /var/lib/spark-orchestrator; chown 185:185 /var/lib/spark-orchestrator
ENV NODE_ENV=production LOG_FORMAT=json STACK_DIR=/var/lib/spark-orchestrator
VOLUME /var/lib/spark-orchestrator
USER 185:185
EXPOSE 9888
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/api.js"]
