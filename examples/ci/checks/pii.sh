#!/usr/bin/env bash
# pii.sh FILE: a stand-in PII check (docs/CI.md): fails when FILE holds
# something shaped like a US social security number, and writes a report.
set -euo pipefail
hits=$(grep -cE '[0-9]{3}-[0-9]{2}-[0-9]{4}' "$1" || true)
printf '{"check":"pii_detection","file":"%s","ssn_like":%d}\n' "$(basename "$1")" "$hits"
[ "$hits" -eq 0 ]
