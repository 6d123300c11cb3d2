# syntax=docker/dockerfile:1
# Build stage: install everything, compile, then keep only the runtime dependencies.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts are skipped here (`prepare` would build before the sources are copied); native modules used at
# run time (argon2, DuckDB) ship prebuilt binaries.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json nest-cli.json ./
COPY src ./src
COPY scripts/pglite-template.js ./scripts/
# As `prepare` does: the compiled service, and the embedded database's empty cluster (used when the image
# runs without DATABASE_URL, so that its first start skips initdb).
RUN npx nest build && node scripts/pglite-template.js && npm prune --omit=dev --ignore-scripts

# Runtime stage: Debian's Chromium for PNG dashboards, a non-root user, state in a volume.
FROM node:20-bookworm-slim
RUN apt-get update \
  && apt-get install -y --no-install-recommends chromium fonts-dejavu-core fonts-liberation tini ca-certificates \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4465 \
    PROJECT_DIR=/app/examples/expenses \
    DATA_DIR=/data \
    CHROMIUM_PATH=/usr/bin/chromium
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
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
