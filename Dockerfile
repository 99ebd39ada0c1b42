# Codeloom's container image (docs/deploy.md).
#
#   docker build -t codeloom .                       # the server: SQLite under /data, or DATABASE_URL / REDIS_URL
#   docker build --target verify -t codeloom:verify . # + bubblewrap and toolchains for verified generation
#
# BASE_IMAGE is any Debian bookworm image with Node 20+ (node, npm and Node's headers under
# /usr/local, as the official node images have them); the image test builds a stand-in for it
# (packages/server/test/container.e2e.test.ts).
ARG BASE_IMAGE=node:20-bookworm-slim

# ---------------------------------------------------------------------------------------------
# builder: every dependency, the TypeScript build, then the dev dependencies pruned away.
FROM ${BASE_IMAGE} AS builder
# better-sqlite3 is native: it downloads a prebuilt binary when it can and compiles otherwise,
# against the base image's own Node headers (npm_config_nodedir: nothing fetched from nodejs.org).
# tini: the final image's PID 1 (below).
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ ca-certificates tini \
 && rm -rf /var/lib/apt/lists/*
ENV npm_config_nodedir=/usr/local \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false
WORKDIR /src
# The manifests first, so the dependency layer is cached until the lockfile changes.
COPY package.json package-lock.json tsconfig.base.json ./
COPY packages/protocol/package.json packages/protocol/
COPY packages/sandbox-model/package.json packages/sandbox-model/
COPY packages/server/package.json packages/server/
COPY packages/cli/package.json packages/cli/
COPY packages/client/package.json packages/client/
COPY packages/web/package.json packages/web/
RUN npm ci
COPY packages ./packages
RUN npm run build \
 && npm prune --omit=dev \
 && find packages -name '*.tsbuildinfo' -delete

# ---------------------------------------------------------------------------------------------
# base: production dependencies and the built packages, as a non-root user (the `runtime` and
# `verify` targets below; `runtime`, the last stage, is what a plain `docker build` gives).
FROM ${BASE_IMAGE} AS base
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    CODELOOM_DATA_DIR=/data
RUN groupadd --system --gid 10001 codeloom \
 && useradd --system --uid 10001 --gid codeloom --home-dir /data --no-create-home --shell /usr/sbin/nologin codeloom \
 && mkdir -p /data \
 && chown codeloom:codeloom /data \
 && chmod 0750 /data
WORKDIR /app
COPY --from=builder /src/package.json /src/package-lock.json ./
COPY --from=builder /src/node_modules ./node_modules
COPY --from=builder /src/packages ./packages
COPY --from=builder /usr/bin/tini-static /usr/bin/tini
# `codeloom migrate`, `codeloom admin …` in the container (docker exec / a one-off run): the server commands of the CLI.
RUN ln -s /app/packages/cli/dist/main.js /usr/local/bin/codeloom
USER 10001:10001
VOLUME ["/data"]
EXPOSE 8080
# GET /healthz with Node itself (no curl in the image).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The server drains on SIGTERM (docs/operations.md): give the runtime's stop at least
# CODELOOM_SHUTDOWN_TIMEOUT (30 s) plus a little (docker stop -t 40, stop_grace_period: 40s).
STOPSIGNAL SIGTERM
# tini is PID 1: it passes SIGTERM on to node, which drains, and reaps orphans (verification
# sandboxes). With node itself as PID 1 a SIGTERM that came before the server had installed its
# handler (during start-up: migrations, waiting for the database) was ignored, so the stop waited
# for the runtime's SIGKILL. Exec form, no shell. The heap flags are `npm start`'s (scripts/heap-flags.mjs).
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--min-semi-space-size=16", "--max-semi-space-size=16", "packages/server/dist/main.js"]

# ---------------------------------------------------------------------------------------------
# verify-tools: the TypeScript toolchain generated TypeScript is checked with (the versions of the lockfile).
FROM builder AS verify-tools
RUN mkdir -p /opt/codeloom-verify \
 && cd /opt/codeloom-verify \
 && echo '{"private":true}' > package.json \
 && npm install --no-save $(node -e "const l=require('/src/package-lock.json').packages;console.log(['typescript','tsx','vitest','@types/node'].map(n=>n+'@'+l['node_modules/'+n].version).join(' '))") \
 && rm -f package-lock.json

# ---------------------------------------------------------------------------------------------
# verify: verified generation (docs/verification.md) — bubblewrap, Python with pytest, C and C++,
# make/cmake, and tsc/tsx/vitest. bubblewrap needs user namespaces, mount and an unmasked /proc:
#   docker run --security-opt seccomp=unconfined --security-opt systempaths=unconfined --security-opt apparmor=unconfined …
#   podman run --security-opt seccomp=unconfined --security-opt unmask=ALL …
# (docs/deploy.md; not --cap-add SYS_ADMIN: bubblewrap refuses to run with it as a non-root user).
# tini (the entrypoint) already reaps what the sandboxes leave behind: no --init needed.
# More toolchains: --build-arg VERIFY_EXTRA_PACKAGES="default-jdk-headless rustc cargo golang-go".
FROM base AS verify
ARG VERIFY_EXTRA_PACKAGES=""
USER root
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap python3 python3-pytest gcc g++ libc6-dev make cmake ${VERIFY_EXTRA_PACKAGES} \
 && rm -rf /var/lib/apt/lists/*
COPY --from=verify-tools /opt/codeloom-verify/node_modules /opt/codeloom-verify/node_modules
ENV CODELOOM_VERIFY_NODE_MODULES=/opt/codeloom-verify/node_modules
USER 10001:10001

# ---------------------------------------------------------------------------------------------
# runtime: the default target (last, so a plain `docker build` gives it).
FROM base AS runtime
