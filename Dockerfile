# syntax=docker/dockerfile:1
# Build stage: install everything, compile TypeScript and bundle the server.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs ./scripts/
COPY src ./src
# tsc's modules, then the server bundle over dist/server.js, and the embedded database's cluster
# template (scripts/build.mjs; best effort, so the folder may be empty). The template's spare is
# dropped: it is taken by a rename into DATA_DIR, which cannot cross into the /data volume.
RUN node scripts/build.mjs && mkdir -p node_modules/.cache/sift && rm -rf node_modules/.cache/sift/*.spare

# Runtime stage: production dependencies and the compiled app, as a non-root user.
FROM node:24-bookworm-slim
ENV NODE_ENV=production PORT=8000 HOST=0.0.0.0 DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The cluster template: a first start without DATABASE_URL copies it instead of running initdb.
COPY --from=build --chown=node:node /app/node_modules/.cache/sift ./node_modules/.cache/sift
COPY migrations ./migrations
COPY views ./views
COPY vocabulary ./vocabulary
COPY bin ./bin
COPY scripts/ensure-built.mjs ./scripts/
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8000)+'/up').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["sh", "bin/sift-server"]
