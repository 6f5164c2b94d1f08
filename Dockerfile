# syntax=docker/dockerfile:1
# Lode: one image, one entry point for every role: `node dist/apps/lode/src/main.js` runs what
# LODE_ROLE names (`all`, the default: API and workers in one process; `api`; `worker`), and
# `node dist/apps/lode/src/cli.js` is the command line.

FROM node:24-bookworm AS build
# nodegit 0.28.0-alpha.36 has no usable prebuilt binary and compiles libgit2 from source:
# it needs the Kerberos headers and a C/C++ toolchain.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libkrb5-dev libssl-dev python3 make g++ git \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# node-gyp takes Node's headers from the image instead of downloading them; JOBS=max runs make in parallel.
ENV npm_config_nodedir=/usr/local \
    JOBS=max
COPY package.json package-lock.json ./
# postinstall: scripts/patch-dependencies.cjs mends a dependency's known bug, and
# scripts/build-native.cjs builds native/malloc-trim (glibc's malloc_trim for the idle memory trim).
COPY scripts ./scripts
COPY native ./native
# `npm install`, not `npm ci`: the lock file is made on linux-x64 and lacks other platforms' optional
# packages (@swc/core-*, msgpackr-extract), which `npm ci` refuses. `npm install` keeps the lock's versions.
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY apps ./apps
COPY libs ./libs
RUN npm run build \
 && test -f dist/apps/lode/src/main.js \
 && test -f dist/apps/lode/src/cli.js \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim AS runtime
# git: `git http-backend`, archive and gc; the Kerberos libraries: what nodegit.node links against.
RUN apt-get update \
 && apt-get install -y --no-install-recommends git libkrb5-3 libgssapi-krb5-2 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
# glibc's malloc as `npm start` sets it (README, Start it): two arenas, and blocks of 128 KB or more
# mapped on their own so that freeing them gives the memory back.
ENV NODE_ENV=production \
    PORT=8080 \
    LODE_DATA_DIR=/var/lib/lode \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/native/malloc-trim/build/Release/malloc_trim.node ./native/malloc-trim/build/Release/malloc_trim.node
# `npx lode <command>` (or `node bin/lode.cjs`): the command line, which runs dist/ as it is here.
COPY bin ./bin
# GitLab's entity shapes, which the OpenAPI document's response schemas are made from (apps/lode/src/openapi.ts).
COPY test/contract/schemas ./test/contract/schemas
# The code stays root-owned and read-only to the service; only the data directory is its own.
RUN mkdir -p "$LODE_DATA_DIR" && chown node:node "$LODE_DATA_DIR"
USER node
VOLUME ["/var/lib/lode"]
# 8080: HTTP (the API and git over HTTP); 2222: git over SSH (LODE_SSH_PORT).
EXPOSE 8080 2222
# Liveness only (/-/health); /-/readiness also checks PostgreSQL and Redis.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/-/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# V8's heap as `npm start` sets it (README, "Start it"): the young generation at 8 MB a semi-space,
# never shrunk by the idle memory trim, instead of Node 24's larger default, and the old generation
# grown to twice what survived its last collection rather than V8's up to four times: the server's
# RSS stays flat over rounds of load.
CMD ["node", "--min-semi-space-size=8", "--max-semi-space-size=8", "--heap-growing-percent=100", "dist/apps/lode/src/main.js"]
