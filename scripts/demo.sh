#!/usr/bin/env bash
# demo.sh: the main job on embedded defaults. Verifies the shipped VPECs and
# model profile offline with bin/svc, then shows what a tampered VPEC looks
# like. No network, no configuration.
set -uo pipefail
cd "$(dirname "$0")/.."
V=testdata/vectors
TRUST=$V/keys/trust-bundle.pem
svc=bin/svc

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

status=0
step $svc verify-profile $V/profile/pii-detection-v1.0.0.json --trust-root $TRUST || status=1
step $svc verify $V/vpec/valid/clean.json --trust-root $TRUST || status=1
step $svc verify $V/vpec/valid/witnessed.json --trust-root $TRUST || status=1
step $svc verify $V/vpec/valid/bounded-inference.json --trust-root $TRUST --profile $V/profile/pii-detection-v1.0.0.json || status=1
step $svc hash 'Patient John Doe, DOB 1970-01-01, claim #4411' --expect "$(jq -r '.records[0].commitment_hash' $V/vpec/valid/clean.json)" || status=1

echo
echo "Now a VPEC whose gpu_class is outside its profile's calibrated classes (expected: exit 1):"
step $svc verify $V/vpec/invalid/gpu-class-not-calibrated.json --trust-root $TRUST --profile $V/profile/pii-detection-v1.0.0.json
code=$?
[ "$code" = 1 ] || status=1
echo
if [ "$status" = 0 ]; then
	echo "demo: all VALID documents verified, and the tampered one was caught (exit $code)."
else
	echo "demo: something did not verify as expected" >&2
fi
exit $status
