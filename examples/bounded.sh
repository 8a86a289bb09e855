#!/usr/bin/env bash
# bounded.sh: a Bounded Inference classifier check, end to end. Needs svc
# built with cgo and ONNX Runtime (`make ort`), a service (SVC_API_KEY,
# SVC_BASE_URL) and its data directory for the operator's publish step
# (local.sh --bounded sets all of it up).
#
#   examples/bounded.sh OUT_DIR DATA_DIR TRUST_BUNDLE
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
out=${1:?usage: bounded.sh OUT_DIR DATA_DIR TRUST_BUNDLE}
data=${2:?usage: bounded.sh OUT_DIR DATA_DIR TRUST_BUNDLE}
bundle=${3:?usage: bounded.sh OUT_DIR DATA_DIR TRUST_BUNDLE}
mkdir -p "$out"
export SVC_STATE="$out/.svc-run-bounded.json" SVC_QUEUE_PATH="$out/queue.jsonl"
model="$out/pii-model"

# The ML team: a classifier (here a generated DistilBERT-style export with
# its tokenizer.json; a real export directory works the same).
svc model generate --style torch --out "$model"
# The service operator: calibrate its drift profile on real executions and
# publish it; the service signs it.
# A profile is immutable once published: a second run of this script
# finds it in the registry and goes on.
if ! svc registry get "$(svc-verify hash --file "$model/model.onnx")" >/dev/null 2>&1; then
	svc calibrate run --model "$model" --passes 200 --model-class pii \
		--profile-id acme/pii-class/v1.0.0 --out "$out/profile.unsigned.json" --force
	svc registry publish "$out/profile.unsigned.json" --data-dir "$data"
fi

# The application: six records per check (pre-conditions, the traced
# inference at operator_bound, post-conditions); the trace stays local.
manifest=$(svc manifest register "$here/pii-check.yaml")
svc run open --workflow-id claims-intake
rm -f "$out/note.trace.json" # a second run keeps its own trace
svc record --check pii_detection --manifest-id "$manifest" --model "$model" \
	--input-file "$here/note.txt" --trace-out "$out/note.trace.json"
svc close --out "$out/vpec-bounded.json" --force

# The auditor: the signed profile from the registry, then the VPEC
# verified offline with it and the kept trace replayed.
svc registry get "$(svc-verify hash --file "$model/model.onnx")" > "$out/profile.json"
svc verify "$out/vpec-bounded.json" --trust-root "$bundle" --profile "$out/profile.json" \
	--trace "$out/note.trace.json" --model "$model" --input-file "$here/note.txt"
