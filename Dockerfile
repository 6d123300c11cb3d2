# syntax=docker/dockerfile:1
# Base images, replaceable (a mirror, a hardened base): Node 26 (LTS) on Debian bookworm to build with, and plain
# Debian bookworm to run on, with only the node binary copied over (no npm, no headers: smaller, and fewer
# packages to patch). `npm run test:container` passes ones made from Debian's packages (test/container/images.sh).
ARG BASE_IMAGE=node:26-bookworm-slim
ARG RUNTIME_IMAGE=debian:bookworm-slim

# Build stage: install everything and compile.
FROM ${BASE_IMAGE} AS build
# argon2 (password hashes) is compiled here for the Node it will run on: its prebuilt binary crashed
# (SIGSEGV) on a Node 20 build we run, and a compiled one cannot. DuckDB's binary is used as shipped.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts are skipped here (`prepare` would build before the sources are copied), but for argon2's own.
# npm's cache stays in a cache mount between builds.
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts --no-audit --no-fund \
  && npm_config_nodedir=/usr/local npm rebuild argon2 --build-from-source --foreground-scripts \
  && node -e "require('argon2').hash('x').then(() => console.log('argon2: compiled, works'))"
COPY tsconfig.json nest-cli.json ./
COPY src ./src
COPY scripts/pglite-template.js scripts/redoc-bundle.js ./scripts/
# As `prepare` does: the compiled service, and the embedded database's empty cluster (used when the image
# runs without DATABASE_URL, so that its first start skips initdb).
RUN npx nest build && node scripts/pglite-template.js && node scripts/redoc-bundle.js
# The node binary the runtime gets, without its symbol table (33 MB of Node 26's 150 MB; the dynamic symbols
# the native addons link to stay): the image stays under the 700 MB issue 18 allows.
RUN strip -o /usr/local/bin/node-stripped /usr/local/bin/node && /usr/local/bin/node-stripped --version

# Runtime dependencies only, installed afresh (npm prune leaves some development packages behind), without
# what only a compiler or an editor reads: TypeScript (an optional peer of @nestjs/swagger that npm installs
# anyway), TypeORM's browser build, declarations, source maps and read-mes (about 180 MB).
FROM ${BASE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && rm -rf node_modules/typescript node_modules/typeorm/browser \
  && find node_modules -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \
    -o -name '*.md' -o -name '*.ts' \) -delete
COPY --from=build /app/node_modules/argon2/build ./node_modules/argon2/build

# Runtime stage: Node, Debian's Chromium headless shell for PNG dashboards (no GTK: half the size of the full
# browser), a non-root user. HOME is /tmp so that the root file system can be read-only. DATA_DIR holds only
# what a replica can lose (built environments are fetched again from Postgres): a volume or a tmpfs, never
# shared.
FROM ${RUNTIME_IMAGE}
# Headless Chromium draws with its own software renderer (--disable-gpu): Mesa's GPU drivers, LLVM behind
# them and what only they use (about 200 MB, through chromium-common's dependency on libgl1-mesa-dri) are
# removed, as is the Vulkan validation layer. test/container checks a PNG dashboard renders without them.
# libatomic1: Node 26's binary links it.
RUN apt-get update \
  && apt-get install -y --no-install-recommends chromium-headless-shell fonts-dejavu-core fonts-liberation tini ca-certificates libatomic1 \
  && dpkg --purge --force-depends libgl1-mesa-dri libllvm15 libz3-4 libxml2 libicu72 \
  && rm -f /usr/lib/chromium/libVkLayer_khronos_validation.so \
  && rm -rf /var/lib/apt/lists/* \
  && groupadd --gid 1000 node && useradd --uid 1000 --gid node --no-create-home --home-dir /tmp node
COPY --from=build /usr/local/bin/node-stripped /usr/local/bin/node
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4465 \
    PROJECT_DIR=/app/examples/expenses \
    DATA_DIR=/data \
    CHROMIUM_PATH=/usr/lib/chromium/chromium-headless-shell \
    HOME=/tmp
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY examples ./examples
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 4465
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||4465)+'/health/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# tini forwards SIGTERM to Node, which drains requests and exits.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/main.js"]
