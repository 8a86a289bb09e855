#!/usr/bin/env bash
# record.sh: the recording job of docs/CI.md, run in this directory.
# Re-runnable in one workspace: each run opens a new run and replaces the
# last run's vpec.json (--force).
set -euo pipefail
export SVC_API_KEY="$SVC_API_KEY"                               # pk_live_… from the CI secret store
export SVC_BASE_URL="${SVC_BASE_URL:-https://svc.internal}"     # the service
export SVC_QUEUE_PATH="${CI_PROJECT_DIR:-$PWD}/.svc-queue.jsonl" # keep it in the workspace cache

MANIFEST=$(svc manifest register governance/claims.yaml)
svc run open --workflow-id "claims-intake" --policy hipaa

# Each check runs here; svc only ever sees the SHA-256 of its input and output.
if ./checks/pii.sh data/batch.jsonl > pii-report.json; then result=pass; else result=fail; fi
svc record --check pii_detection --manifest-id "$MANIFEST" --result "$result" \
  --input-file data/batch.jsonl --output-file pii-report.json --details model=pii-v3

if ./checks/injection.sh data/prompts.txt; then result=pass; else result=fail; fi
svc record --check prompt_injection --manifest-id "$MANIFEST" --result "$result" --input-file data/prompts.txt

# --force: a job run again in the same workspace replaces the last VPEC.
# Add --require-passed to fail the job (after writing the VPEC) when a
# check failed or hit an error.
svc close --out vpec.json --force --output json > close.json
jq -e '.offline == false' close.json >/dev/null ||
  echo "service unreachable: vpec.json is an unsigned offline VPEC; 'svc queue flush' writes the signed one over it (or: svc vpec get RUN_ID --out vpec.json --force)"
