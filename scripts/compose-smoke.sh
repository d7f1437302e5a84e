#!/usr/bin/env bash
# Starts docker-compose.yml (PostgreSQL, two Sift replicas, Caddy), checks it
# from outside through the one published port, and takes it down again with
# its volumes. Needs a Docker engine with the compose plugin, and the images'
# registry. Used by .ci/run where a Docker engine answers; by hand:
#   bash scripts/compose-smoke.sh
set -euo pipefail
cd "$(dirname "$0")/.."

export COMPOSE_PROJECT_NAME="sift-smoke-$$"
export SIFT_PORT="${SIFT_SMOKE_PORT:-18080}"
# Characters that break a password written into a URL: the replicas must still connect.
export POSTGRES_PASSWORD='p@ss:w/rd%41 #?&='
base="http://127.0.0.1:${SIFT_PORT}"
compose() { docker compose --project-name "$COMPOSE_PROJECT_NAME" "$@"; }

alone=""
cleanup() {
  status=$?
  if [ "$status" -ne 0 ]; then compose logs --no-color --tail 80 || true; fi
  if [ -n "$alone" ]; then docker rm --force --volumes "$alone" >/dev/null 2>&1 || true; fi
  compose down --volumes --remove-orphans >/dev/null 2>&1 || true
  exit "$status"
}
trap cleanup EXIT

echo "-- docker compose up (build, then wait for every health check)"
compose up --detach --build --wait --wait-timeout 300

echo "-- /up through the load balancer"
test "$(curl -fsS "$base/up")" = "OK"

echo "-- a user and a key, made on one replica"
printf '%s\n' 'smoke-test-passphrase' |
  compose exec -T sift-1 node bin/sift.mjs create-user smoke --password-stdin >/dev/null
key="$(compose exec -T sift-1 node bin/sift.mjs create-api-key smoke | grep -E '^svc_sk_' | tr -d '\r')"
test -n "$key"

echo "-- the API through the load balancer, answered by both replicas"
for _ in 1 2 3 4 5 6; do
  curl -fsS -o /dev/null -H "Authorization: Api-Key $key" "$base/api/v1/key/"
done
for replica in sift-1 sift-2; do
  compose exec -T "$replica" node -e \
    "fetch('http://127.0.0.1:8000/api/v1/key/',{headers:{authorization:'Api-Key $key'}}).then((r)=>process.exit(r.status===200?0:1),()=>process.exit(1))"
done

echo "-- one replica stopped: the load balancer keeps answering"
compose stop sift-2 >/dev/null
for _ in 1 2 3 4; do
  curl -fsS -o /dev/null -H "Authorization: Api-Key $key" "$base/api/v1/key/"
done

echo "-- the image alone, no DATABASE_URL: its first start copies the build's cluster template"
# sift:local: the image the compose file builds (its replicas' image).
alone="$(docker run --detach --env WORKERS=1 sift:local)"
for _ in $(seq 90); do
  if docker logs "$alone" 2>&1 | grep -q '"msg":"ready"'; then break; fi
  sleep 1
done
docker logs "$alone" 2>&1 | grep -q '"msg":"ready"'
docker logs "$alone" 2>&1 | grep -q 'made a new cluster in .* from the template'
if docker logs "$alone" 2>&1 | grep -q 'initialised a new cluster'; then exit 1; fi

echo "-- compose smoke test passed"
