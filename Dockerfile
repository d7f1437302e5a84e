# syntax=docker/dockerfile:1
# Build stage: install everything, compile TypeScript and bundle the server.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs ./scripts/
COPY src ./src
# tsc's modules, then the server bundle over dist/server.js (scripts/build.mjs).
RUN node scripts/build.mjs

# Runtime stage: production dependencies and the compiled app, as a non-root user.
FROM node:24-bookworm-slim
ENV NODE_ENV=production PORT=8000 HOST=0.0.0.0 DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
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
