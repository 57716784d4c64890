#!/usr/bin/env bash
# One-shot before Airflow starts (the airflow-init service): migrate the metadata database, set the
# admin's password (and, when set, that of the read-only user "prometheus") from docker/.env, check
# that the kafka-ops settings file loads (a typo in it stops the stack here, with the file's own
# error, instead of failing every DAG run later), that a local lake is writable, and on the object
# store, that the lake's bucket exists.
set -euo pipefail

: "${AIRFLOW_ADMIN_PASSWORD:?is empty: set it in docker/.env (see docker/.env.example)}"
: "${AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE:?is not set (docker-compose.yml sets it)}"

echo "== airflow db migrate"
airflow db migrate

echo "== admin and prometheus passwords -> ${AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE}"
python - <<'PY'
import json
import os
import secrets
from pathlib import Path

path = Path(os.environ["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE"])
path.parent.mkdir(parents=True, exist_ok=True)
tmp = path.with_name(path.name + ".tmp")
# Without AIRFLOW_PROMETHEUS_PASSWORD (no monitoring profile) the user gets a random password nobody
# knows: left out of the file, the api-server would generate one and print it to its log.
prometheus = os.environ.get("AIRFLOW_PROMETHEUS_PASSWORD") or secrets.token_urlsafe(32)
passwords = {"admin": os.environ["AIRFLOW_ADMIN_PASSWORD"], "prometheus": prometheus}
tmp.write_text(json.dumps(passwords) + "\n")
tmp.chmod(0o600)
tmp.replace(path)
PY

echo "== kafka-ops settings (${KAFKA_OPS_CONFIG:-no settings file: one cluster 'default'})"
python -c "
from kafka_ops.settings import load_settings
s = load_settings()
for c in s.clusters:
    print(f'  cluster {c.name}: zookeeper {c.zookeeper_conn_id}, kafka {c.kafka_conn_id}, '
          f'alerts {list(c.alert_conn_ids) or [\"log\"]}, writes_enabled={c.writes_enabled}')
print(f'  lake {s.lake_root}')
"

if [[ "${KAFKA_OPS_LAKE:-}" != *://* && -n "${KAFKA_OPS_LAKE:-}" ]]; then
    mkdir -p "${KAFKA_OPS_LAKE}"
    if [[ ! -w "${KAFKA_OPS_LAKE}" ]]; then
        echo "the lake ${KAFKA_OPS_LAKE} is not writable by $(id -un) (uid $(id -u)): fix the volume's owner" >&2
        exit 1
    fi
fi
if [[ "${KAFKA_OPS_LAKE:-}" == s3://* ]]; then
    bucket="${KAFKA_OPS_LAKE#s3://}"
    bucket="${bucket%%/*}"
    echo "== the lake's bucket ${bucket} at ${AWS_ENDPOINT_URL:-AWS}"
    # the object-store service takes an unsigned PUT; a real store's bucket is made by its owner
    python -c "
import os, sys, httpx
url = os.environ.get('AWS_ENDPOINT_URL')
if url:
    print('  PUT', url, sys.argv[1], '->', httpx.put(f'{url}/{sys.argv[1]}', timeout=30).status_code)
" "${bucket}"
fi
echo "== ready"
