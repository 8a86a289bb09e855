#!/usr/bin/env bash
# gate.sh: the release gate of docs/CI.md: accept vpec.json only if it is
# authentic, clean (no governance gaps) and every recorded check passed.
set -uo pipefail
curl -fsS "${SVC_BASE_URL:-https://svc.internal}/.well-known/svc/trust-bundle.pem" -o trust-bundle.pem   # or pin it in the repository
svc-verify verify vpec.json --trust-root trust-bundle.pem --require-clean --require-passed --output json > report.json
case $? in
  0) echo "VPEC valid, clean, every check passed" ;;
  1) echo "VPEC not accepted: $(jq -r .verdict report.json)"
     jq -r '.checks[] | select(.status=="fail") | "  \(.name): \(.message)"' report.json
     jq -r 'select(.checks_failed + .checks_errored > 0) | "  \(.checks_failed) check(s) failed, \(.checks_errored) hit an error"' report.json
     exit 1 ;;
  2) echo "could not read vpec.json"; exit 1 ;;
  3) echo "trust material missing: $(jq -r .verdict report.json 2>/dev/null)"; exit 1 ;;
  *) echo "svc-verify failed"; exit 1 ;;
esac
