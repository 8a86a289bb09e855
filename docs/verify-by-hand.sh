#!/usr/bin/env bash
# verify-by-hand.sh: verify an svc VPEC (svc.vpec/v1) with openssl, jq, xxd
# and a POSIX shell only, without any svc code. docs/VERIFYING.md explains
# every step; its marked code blocks are this file, in order, and
# `go test ./docs/` fails if the two drift apart.
#
# usage: verify-by-hand.sh VPEC_FILE TRUST_BUNDLE [PROFILE_FILE ...]
# exit:  0 VALID (by hand)   1 INVALID   2 usage, unreadable input or missing tool
#        3 UNVERIFIED: trust material missing (TSA root, service key, profile)
#        4 NOT CHECKED: jq cannot canonicalize this document (use svc-verify)
# shellcheck disable=SC2016 # $names inside single quotes are jq variables
set -euo pipefail

if [ "$#" -lt 2 ]; then
  echo "usage: $0 VPEC_FILE TRUST_BUNDLE [PROFILE_FILE ...]" >&2
  exit 2
fi
VPEC=$1
BUNDLE=$2
shift 2
for tool in openssl jq xxd awk sed; do
  command -v "$tool" >/dev/null || { echo "$0: $tool is required" >&2; exit 2; }
done
for f in "$VPEC" "$BUNDLE" "$@"; do
  [ -r "$f" ] || { echo "$0: cannot read $f" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ok()   { printf 'ok    %s\n' "$*"; }
warn() { printf 'warn  %s\n' "$*"; }
fail() {
  code=$1
  shift
  printf 'FAIL  %s\n' "$*"
  case $code in
    2) echo "UNREADABLE (by hand)" ;;
    3) echo "UNVERIFIED (by hand)" ;;
    4) echo "NOT CHECKED (by hand): verify this document with svc-verify" ;;
    *) echo "INVALID (by hand)" ;;
  esac
  exit "$code"
}
sha256_hex() { openssl dgst -sha256 -r | cut -d ' ' -f 1; }
# b64d decodes one-line standard base64 and fails unless the text is the
# one canonical spelling of its bytes (padded, no whitespace, no stray bits).
b64d() { local s; s=$(cat; printf x); s=${s%x}; s=${s%$'\n'}; [ "$(printf '%s' "$s" | openssl base64 -d -A | openssl base64 -A)" = "$s" ] && printf '%s' "$s" | openssl base64 -d -A; }
field() { jq -r "$1" "$VPEC"; }
# fields EXPR: one jq call that sets a shell variable for each member of the
# object EXPR builds (values as jq -r prints them), e.g.
#   fields '.records[0] | {seq: .sequence}'   sets $seq.
fields() { eval "$(jq -r "$1"' | to_entries[] | "\(.key)=\(.value | if type == "string" then . else tojson end | @sh)"' "$VPEC")"; }

# Step 1: a JSON text at all (exit 2 if not), then one JSON object without
# duplicate keys (I-JSON).
[ "$(wc -c < "$VPEC")" -le 268435456 ] ||
  fail 2 "schema: the document is larger than the 268435456 byte (256 MiB) limit (TOO LARGE)"
[ -n "$(tr -d ' \t\r\n' < "$VPEC" | head -c 1)" ] || fail 2 "schema: the document is empty"
[ -z "$(LC_ALL=C tr -d '\t\r\n -\377' < "$VPEC" | head -c 1)" ] ||
  fail 2 "schema: not JSON: binary data (a control byte)"
[ "$(jq -s length "$VPEC" 2>/dev/null)" = 1 ] ||
  fail 1 "schema: not exactly one JSON value"
[ "$(jq -c --stream . "$VPEC" | wc -l)" -eq "$(jq -c tostream "$VPEC" | wc -l)" ] ||
  fail 1 "schema: an object has the same key twice"

# An unsigned offline VPEC (svc.vpec.unsigned-offline/v1) is the local copy
# a client writes when it closes a run offline: not a credential (exit 1).
if [ "$(jq -r 'if type == "object" then .schema else "" end' "$VPEC")" = svc.vpec.unsigned-offline/v1 ]; then
  run=$(jq -r '.run_id | if type == "string" and test("\\Arun_[A-Za-z0-9._:-]{1,124}\\z") then . else "RUN_ID" end' "$VPEC")
  printf 'FAIL  schema: unsigned offline VPEC (svc.vpec.unsigned-offline/v1): fetch the signed one with svc vpec get %s\n' "$run"
  echo "UNSIGNED OFFLINE VPEC (by hand): fetch the signed one with svc vpec get $run"
  exit 1
fi

# Step 2: the v1 schema: exact field sets, types, enums and patterns.
SCHEMA_JQ='
def id: type == "string" and test("\\A[A-Za-z0-9][A-Za-z0-9._:-]{0,127}\\z");
def pid($p): id and startswith($p) and (.[($p | length):] | test("\\A[A-Za-z0-9]"));
def sha256: type == "string" and test("\\Asha256:[0-9a-f]{64}\\z");
def commitment: type == "string" and test("\\A(sha256:[0-9a-f]{64}|poseidon2:[0-9a-f]{64})\\z");
def time: type == "string" and
  test("\\A[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]+)?Z\\z");
def int($lo; $hi): type == "number" and . == floor and . >= $lo and . <= $hi;
def count: int(0; 9007199254740991);
def share: type == "number" and . >= 0 and . <= 1;
def oneof($set): . as $v | any($set[]; . == $v);
def opt(f): . == null or f;
def name: type == "string" and (explode | all(.[]; (. < 32 or (. >= 127 and . <= 159) or . == 1564 or
  . == 8206 or . == 8207 or (. >= 8234 and . <= 8238) or (. >= 8294 and . <= 8297)) | not));
def member($name; f): (has($name) | not) or (.[$name] | f);
def levels: ["mathematical", "verifiable_inference", "operator_bound", "execution", "witnessed", "attestation"];
def items: if type == "array" then .[] else empty end;
def fields($where; $required; $optional):
  if type != "object" then "\($where) is not an object"
  else (keys - $required - $optional | .[] | "\($where) has unknown field \(.)"),
       ($required - keys | .[] | "\($where) lacks required field \(.)") end;
def check($what; f): if f then empty else "invalid \($what)" end;
def record_fields: ["record_id", "sequence", "check", "manifest_id", "check_result", "proof_level",
  "commitment_algorithm", "commitment_hash", "visibility", "recorded_at", "chain_hash"];
def record($i):
  "records[\($i)]" as $r
  | fields($r; record_fields; ["output_commitment", "onnx_model_hash", "stage_type", "stage_part", "details", "review", "check_session", "bounded_inference",
      "disclosed_input", "disclosed_output", "field_digests", "disclosures", "manifest", "zk_proof"]),
    check("\($r).record_id"; .record_id | pid("rec_")),
    check("\($r).sequence"; .sequence | int(1; 9007199254740991)),
    check("\($r).check (1-256 bytes, no control characters)"; .check | name and length > 0 and utf8bytelength <= 256),
    check("\($r).manifest_id (1-256 bytes, no control characters)"; .manifest_id | name and length > 0 and utf8bytelength <= 256),
    check("\($r).check_result"; .check_result |
      oneof(["pass", "fail", "error", "skipped", "degraded", "override", "not_applicable"])),
    check("\($r).proof_level"; .proof_level | oneof(levels)),
    check("\($r).visibility"; .visibility | oneof(["opaque", "selective", "transparent"])),
    check("\($r).commitment_hash"; .commitment_hash | commitment),
    check("\($r).commitment_algorithm"; (.commitment_hash | type == "string") and
      .commitment_algorithm == (.commitment_hash | split(":")[0])),
    check("\($r).output_commitment (omitted, never empty)"; member("output_commitment"; commitment)),
    check("\($r).onnx_model_hash"; member("onnx_model_hash"; type == "string" and test("\\Asha256:[0-9a-f]{64}\\z"))),
    check("\($r).recorded_at"; .recorded_at | time),
    check("\($r).stage_type"; member("stage_type"; oneof(["bound_committed_inference", "open_source_ml", "mlp_head"]))),
    check("\($r).stage_part"; member("stage_part"; oneof(["pre_conditions", "inference", "post_conditions"]))),
    check("\($r).details (omitted, never null or {})"; member("details"; type == "object" and length > 0)),
    check("\($r).disclosed_input (omitted, never empty)"; member("disclosed_input"; type == "string" and length > 0)),
    check("\($r).disclosed_output (omitted, never empty)"; member("disclosed_output"; type == "string" and length > 0)),
    check("\($r).field_digests"; member("field_digests"; type == "array" and length > 0 and length <= 256 and all(.[]; sha256))),
    check("\($r).disclosures"; member("disclosures"; type == "array" and length > 0 and length <= 64 and
      all(.[]; type == "object" and keys == ["field", "salt", "value"] and (.salt | type == "string") and (.field | type == "string")))),
    check("\($r).manifest"; member("manifest"; type == "object" and keys == ["name", "stages", "version"] and
      (.name | type == "string") and (.version | type == "string") and (.stages | type == "array") and all(.stages[];
        type == "object" and (keys - ["disclose"]) == ["proof_ceiling", "regulatory_references", "stage_name"] and
        (.stage_name | type == "string") and ((has("disclose") | not) or (.disclose | type == "array" and length > 0 and all(.[]; type == "string")))))),
    check("\($r).chain_hash"; .chain_hash | type == "string"),
    check("\($r).zk_proof (with verifiable_inference or mathematical only, on a poseidon2 commitment)";
      member("zk_proof"; type == "object" and (.system | type == "string") and (.circuit | type == "string") and
        (.circuit_id | sha256) and (.proof | type == "string")) and
      (.zk_proof == null or ((.proof_level | oneof(["verifiable_inference", "mathematical"])) and .commitment_algorithm == "poseidon2"))),
    check("\($r): review goes with proof_level witnessed, and only with it";
      (.proof_level == "witnessed") == (.review != null)),
    check("\($r): bounded_inference goes with proof_level operator_bound, and only with it";
      (.proof_level == "operator_bound") == (.bounded_inference != null)),
    (.review | select(. != null) |
      fields("\($r).review"; ["session_id", "reviewer_key_id", "reviewer_public_key", "reviewer_signature",
        "min_duration_seconds", "check_open_tst", "check_close_tst"]; ["display_content_hash", "rationale_hash"]),
      check("\($r).review.session_id"; .session_id | id),
      check("\($r).review.reviewer_key_id"; .reviewer_key_id | type == "string"),
      check("\($r).review.reviewer_public_key"; .reviewer_public_key | type == "string"),
      check("\($r).review.reviewer_signature"; .reviewer_signature | type == "string"),
      check("\($r).review.check_open_tst"; .check_open_tst | type == "string"),
      check("\($r).review.check_close_tst"; .check_close_tst | type == "string"),
      check("\($r).review.min_duration_seconds"; .min_duration_seconds | int(0; 1099511627776)),
      check("\($r).review.display_content_hash"; member("display_content_hash"; commitment)),
      check("\($r).review.rationale_hash"; member("rationale_hash"; commitment))),
    check("\($r): check_session and review do not go together"; .check_session == null or .review == null),
    (.check_session | select(. != null) |
      fields("\($r).check_session"; ["session_id", "check_open_tst", "check_close_tst"]; []),
      check("\($r).check_session.session_id"; .session_id | id),
      check("\($r).check_session.check_open_tst"; .check_open_tst | type == "string"),
      check("\($r).check_session.check_close_tst"; .check_close_tst | type == "string")),
    (.bounded_inference | select(. != null) |
      fields("\($r).bounded_inference"; ["profile_id", "gpu_class", "onnx_model_hash", "trace_mode",
        "operator_count", "merkle_root"]; []),
      check("\($r).bounded_inference.profile_id"; .profile_id | type == "string" and
        test("\\A[a-z0-9][a-z0-9._-]{0,63}/[a-z0-9][a-z0-9._-]{0,63}-class/v(0|[1-9][0-9]{0,5})[.](0|[1-9][0-9]{0,5})[.](0|[1-9][0-9]{0,5})\\z")),
      check("\($r).bounded_inference.gpu_class"; .gpu_class | oneof(["cpu", "a10g", "a100", "h100"])),
      check("\($r).bounded_inference.onnx_model_hash"; .onnx_model_hash | sha256),
      check("\($r).bounded_inference.trace_mode"; .trace_mode | oneof(["full", "production", "residual"])),
      check("\($r).bounded_inference.operator_count"; .operator_count | int(1; 4294967296)),
      check("\($r).bounded_inference.merkle_root"; .merkle_root | sha256));
def gap($i):
  "gaps[\($i)]" as $g
  | fields($g; ["gap_id", "gap_type", "severity", "check", "sequence", "timestamp"]; ["sequence_end"]),
    check("\($g).gap_id"; .gap_id | id),
    check("\($g).gap_type"; .gap_type | id),
    check("\($g).severity"; .severity | oneof(["Critical", "High", "Medium", "Low", "Informational"])),
    check("\($g).severity (fixed by its gap_type)";
      {system_unavailable: "High", model_profile_missing: "Medium", circuit_missing: "Medium", sequence_missing: "High",
       chain_break: "Critical", empty_run: "High"}
      [.gap_type | strings] as $fixed | $fixed == null or .severity == $fixed),
    check("\($g).check"; .check | opt(name)),
    check("\($g).sequence"; .sequence | opt(int(-9007199254740991; 9007199254740991))),
    check("\($g).sequence_end (on sequence_missing gaps, and only on them, >= sequence)";
      if .gap_type == "sequence_missing" then (.sequence | int(1; 9007199254740991)) and
        (.sequence_end | int(1; 9007199254740991)) and .sequence_end >= .sequence
      else has("sequence_end") | not end),
    check("\($g) (an empty_run gap has check and sequence null)";
      .gap_type != "empty_run" or (.check == null and .sequence == null)),
    check("\($g).timestamp"; .timestamp | time);
if type != "object" then "the document is not a JSON object" else
  fields("the VPEC"; ["schema", "vpec_id", "run_id", "workflow_id", "org_id", "issued_at", "environment",
    "api_key_id", "proof_level_floor", "proof_level_breakdown", "provable_surface",
    "provable_surface_breakdown", "total_checks_run", "checks_passed", "checks_failed", "gaps",
    "chain_intact", "is_clean", "merkle_root", "records", "signing_key_id", "signature",
    "timestamp_rfc3161"]; ["opened_at"]),
  check("schema (must be svc.vpec/v1)"; .schema == "svc.vpec/v1"),
  check("vpec_id"; .vpec_id | pid("vpec_")),
  check("run_id"; .run_id | pid("run_")),
  check("workflow_id"; .workflow_id | id),
  check("org_id"; .org_id | id),
  check("issued_at"; .issued_at | time),
  check("opened_at"; (has("opened_at") | not) or (.opened_at | time)),
  check("environment"; .environment | oneof(["sandbox", "production"])),
  check("api_key_id"; .api_key_id | id and (startswith("pk_sb_") or startswith("pk_live_"))),
  check("proof_level_floor"; .proof_level_floor | oneof(levels)),
  check("proof_level_breakdown"; .proof_level_breakdown | type == "object" and
    all(to_entries[]; (.key | oneof(levels)) and (.value | count))),
  check("provable_surface"; .provable_surface | share),
  check("provable_surface_breakdown"; .provable_surface_breakdown | type == "object" and all(.[]; share)),
  check("total_checks_run"; .total_checks_run | count),
  check("checks_passed"; .checks_passed | count),
  check("checks_failed"; .checks_failed | count),
  check("gaps"; .gaps | type == "array"),
  check("chain_intact"; .chain_intact | type == "boolean"),
  check("is_clean"; .is_clean | type == "boolean"),
  check("merkle_root"; .merkle_root | sha256),
  check("records"; .records | type == "array"),
  check("signing_key_id"; .signing_key_id | type == "string" and test("\\A[0-9a-f]{16}\\z")),
  check("signature"; .signature | type == "string" and test("\\AEd25519:[A-Za-z0-9+/]{86}==\\z")),
  check("timestamp_rfc3161"; .timestamp_rfc3161 | type == "string" and test("\\A([A-Za-z0-9+/]{4})+\\z|\\A([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)\\z")),
  (.gaps | if type == "array" then to_entries[] | .key as $i | .value | gap($i) else empty end),
  (.records | if type == "array" then to_entries[] | .key as $i | .value | record($i) else empty end),
  check("records (record_id values must be unique)"; [.records | items | .record_id] | length == (unique | length)),
  check("records (sequence numbers must increase)"; [.records | items | .sequence] as $s |
    all(range(1; $s | length); $s[.] > $s[. - 1]))
end'
problems=$(jq -r "$SCHEMA_JQ" "$VPEC" 2>&1) || fail 1 "schema: $(printf '%s' "$problems" | tail -n 1)"
[ -z "$problems" ] || fail 1 "schema: $(printf '%s\n' "$problems" | head -n 1)"
# A zk_proof's proof is the canonical standard base64 of 1 to 1024 bytes:
# another spelling or size is a schema error (whether the bytes are a proof
# is the zk_proofs check's question).
for i in $(field '.records | to_entries[] | select(.value.zk_proof != null) | .key'); do
  n=$(field ".records[$i].zk_proof.proof" | b64d | wc -c) && [ "$n" -ge 1 ] && [ "$n" -le 1024 ] ||
    fail 1 "schema: records[$i].zk_proof.proof is not the canonical standard base64 of 1-1024 bytes"
done
ok "schema: valid (svc.vpec/v1, $(field '.records | length') records)"

# Step 3: check that `jq -cS` writes this document's RFC 8785 (JCS) bytes.
CANONICAL_JQ='
  (.. | objects | keys[] | select(test("\\A[ -~]*\\z") | not) | "object key \(tojson) is not printable ASCII"),
  (.. | strings | select(test("[\u007f\ufffd]")) | "string \(tojson) holds U+007F or U+FFFD"),
  (.. | numbers | select((tostring | test("\\A-?(0|[1-9][0-9]*)([.][0-9]*[1-9])?\\z") | not)
      or tostring == "-0" or . > 9007199254740992 or . < -9007199254740992)
    | "number \(tostring) is not written the same way by jq and RFC 8785")'
problems=$(jq -r "$CANONICAL_JQ" "$VPEC")
[ -z "$problems" ] || fail 4 "canonical: $(printf '%s\n' "$problems" | head -n 1)"
ok "canonical: jq -cS output is the RFC 8785 form of this document"

# Step 4: the trust bundle: PUBLIC KEY blocks (service keys) and CERTIFICATE
# blocks (TSA roots). A key id is the first 16 hex digits of SHA-256(SPKI DER).
awk -v dir="$work" '
  /^-----BEGIN PUBLIC KEY-----$/ { n++; out = dir "/key" n ".pem" }
  /^-----BEGIN CERTIFICATE-----$/ { out = dir "/roots.pem" }
  out != "" { print > out }
  /^-----END / { out = "" }' "$BUNDLE"
key_id_of() { openssl pkey -pubin -in "$1" -outform DER | sha256_hex | cut -c 1-16; }
key_for() {
  for k in "$work"/key*.pem; do
    if [ -e "$k" ] && [ "$(key_id_of "$k")" = "$1" ]; then
      openssl pkey -pubin -in "$k" -noout -text | grep '^ED25519 Public-Key:' >/dev/null || return 1
      echo "$k"
      return 0
    fi
  done
  return 1
}
ls "$work"/key*.pem >/dev/null 2>&1 || fail 3 "signature: the trust bundle holds no PUBLIC KEY block"

# Step 5: the Ed25519 signature over JCS(VPEC without signature and timestamp_rfc3161).
key_id=$(field .signing_key_id)
pub=$(key_for "$key_id") || fail 1 "signature: key $key_id is not an Ed25519 key of the trust bundle"
field .signature | sed 's/^Ed25519://' | b64d > "$work/sig.bin" ||
  fail 1 "schema: signature is not canonical base64"
jq -jcS 'del(.signature, .timestamp_rfc3161)' "$VPEC" > "$work/signed.json"
openssl pkeyutl -verify -pubin -inkey "$pub" -rawin -in "$work/signed.json" \
  -sigfile "$work/sig.bin" >/dev/null 2>&1 ||
  fail 1 "signature: invalid (the signed fields were changed, or the key $key_id did not sign them)"
ok "signature: valid (Ed25519, key $key_id)"

# Step 6: the hash chain, record by record, from the genesis value.
CHAIN_BREAK_JQ='
  if $from > 0 then any(.gaps[]; .gap_type == "sequence_missing" and .sequence == $from and .sequence_end == $to)
  else any(.gaps[]; .gap_type == "chain_break" and .sequence == $seq) end'
declared() { jq -e --argjson seq "$1" --argjson from "$2" --argjson to "$3" "$CHAIN_BREAK_JQ" "$VPEC" >/dev/null; }
run_id=$(field .run_id)
prev=$(printf '%s' "svc.chain.v1:$run_id" | sha256_hex)
prev_seq=0
breaks=0
hash_breaks=""
n=$(field '.records | length')
# Each record without its chain_hash in RFC 8785 form, one per line (the
# compact form has no line break), beside its sequence and chain_hash.
jq -cS '.records[] | del(.chain_hash)' "$VPEC" > "$work/records.jsonl"
field '.records[] | "\(.sequence) \(.chain_hash)"' > "$work/chain.txt"
i=0
while [ "$i" -lt "$n" ]; do
  IFS= read -r record <&3
  read -r seq stored <&4
  printf '%s\n' "$stored" | grep -x 'sha256:[0-9a-f]\{64\}' >/dev/null ||
    fail 1 "chain: record $seq: chain_hash is not sha256:<64 hex>"
  if [ "$seq" -ne $((prev_seq + 1)) ]; then
    breaks=$((breaks + 1))
    missing=$((prev_seq + 1))
    [ "$missing" -eq $((seq - 1)) ] || missing="$missing-$((seq - 1))"
    declared "$seq" $((prev_seq + 1)) $((seq - 1)) ||
      fail 1 "chain: sequence $seq follows $prev_seq, and no gap declares sequence $missing missing"
    warn "chain: sequence $seq follows $prev_seq: sequence $missing missing (declared as a gap); continuing from the stored chain_hash"
  else
    want=$({ printf '%s' "$prev" | xxd -r -p; printf '%s' "$record"; } | sha256_hex)
    if [ "sha256:$want" != "$stored" ]; then
      breaks=$((breaks + 1))
      hash_breaks="$hash_breaks,$seq"
      declared "$seq" 0 0 ||
        fail 1 "chain: record $seq: chain_hash is $stored, recomputed sha256:$want"
      warn "chain: record $seq: chain_hash does not follow (declared chain_break)"
    fi
  fi
  prev=${stored#sha256:}
  prev_seq=$seq
  i=$((i + 1))
done 3< "$work/records.jsonl" 4< "$work/chain.txt"
chain_intact=$(field .chain_intact)
if [ "$breaks" -eq 0 ]; then
  [ "$chain_intact" = true ] || fail 1 "chain: chain_intact is false, but the chain recomputes intact"
  ok "chain: intact ($n records from genesis)"
else
  [ "$chain_intact" = false ] || fail 1 "chain: chain_intact is true, but the chain has $breaks break(s)"
  warn "chain: not intact: $breaks break(s), each declared as a governance gap"
fi

# Step 7: the RFC 6962 Merkle root over the records' commitment_hash strings.
leaf() { { printf '00' | xxd -r -p; printf '%s' "$1"; } | sha256_hex; }
node() { printf '01%s%s' "$1" "$2" | xxd -r -p | sha256_hex; }
merkle_root() {
  set --
  while IFS= read -r c; do set -- "$@" "$(leaf "$c")"; done
  if [ "$#" -eq 0 ]; then printf '' | sha256_hex; return; fi
  while [ "$#" -gt 1 ]; do
    level=""
    while [ "$#" -ge 2 ]; do level="$level $(node "$1" "$2")"; shift 2; done
    if [ "$#" -eq 1 ]; then level="$level $1"; fi
    # shellcheck disable=SC2086 # split the level into positional parameters
    set -- $level
  done
  echo "$1"
}
root=sha256:$(field '.records[].commitment_hash' | merkle_root)
[ "$root" = "$(field .merkle_root)" ] ||
  fail 1 "merkle_root: $(field .merkle_root) does not match the records' commitments (recomputed $root)"
ok "merkle_root: matches $n commitments"

# Step 8: a verifiable_inference record without a zk_proof claims what
# nobody can check; a Groth16 proof is beyond shell tools (use svc-verify).
zk=$(field '[.records[] | select(.proof_level == "verifiable_inference" and .zk_proof == null)] | length')
[ "$zk" -eq 0 ] || fail 1 "zk_proofs: $zk record(s) claim verifiable_inference without a zk_proof"
proofs=$(field '[.records[] | select(.zk_proof != null)] | length')
[ "$proofs" -eq 0 ] || fail 3 "zk_proofs: $proofs zero-knowledge proof(s): a Groth16 pairing check is beyond shell tools; check them with svc-verify verify --circuit ENTRY"
ok "zk_proofs: none present"

# Step 8b: claims and their evidence: a mathematical record without a proof
# is a pre- or post-condition <check>:<part> of a bound_committed_inference
# stage whose operator_bound inference record (check <check>, the same
# input: the same commitment_hash) is in the VPEC.
EVIDENCE_JQ='
  [.records[] | select(.proof_level == "operator_bound" and .bounded_inference != null and
     .stage_type == "bound_committed_inference" and .stage_part == "inference") | [.check, .commitment_hash]] as $inferences
  | [.records[] | select(.proof_level == "mathematical" and .zk_proof == null)
     | select((.stage_type == "bound_committed_inference" and
         (.stage_part == "pre_conditions" or .stage_part == "post_conditions") and (.check | test(":[^:]+\\z")) and
         ([(.check | sub(":[^:]+\\z"; "")), .commitment_hash] as $own | any($inferences[]; . == $own))) | not)
     | .sequence | tostring] | join(", ")'
bad=$(jq -r "$EVIDENCE_JQ" "$VPEC")
[ -z "$bad" ] || fail 1 "evidence: record(s) $bad claim mathematical without its evidence"
ok "evidence: every claimed proof level has its evidence"

# Step 9: the RFC 3161 timestamp over the 64 raw signature bytes.
TIME_JQ='
def months: ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
def two: tostring | if length < 2 then "0" + . else . end;
def ns: (. // ".")[1:] + "000000000" | .[0:9] | tonumber;
def rfc3339_epoch:
  capture("^(?<d>[0-9]{4}-[0-9]{2}-[0-9]{2})T(?<t>[0-9:]{8})(?<f>[.][0-9]+)?(?<z>Z|[+-][0-9]{2}:[0-9]{2})$")
  | (if .z == "Z" then 0 else (.z[1:3] | tonumber) * 3600 + (.z[4:6] | tonumber) * 60 end) as $off
  | (if .z[0:1] == "-" then -$off else $off end) as $off
  | [(.d + "T" + .t + "Z" | fromdateiso8601) - $off, (.f | ns)];
def openssl_epoch:
  capture("^(?<m>[A-Z][a-z]{2}) +(?<d>[0-9]{1,2}) (?<t>[0-9:]{8})(?<f>[.][0-9]+)? (?<y>[0-9]{4}) GMT$")
  | .m as $m
  | [("\(.y)-\(months | index($m) + 1 | two)-\(.d | two)T\(.t)Z" | fromdateiso8601), (.f | ns)];
def plus($s): [.[0] + $s, .[1]];
def seconds_since($o): .[0] - $o[0] - (if .[1] < $o[1] then 1 else 0 end);'
[ -s "$work/roots.pem" ] || fail 3 "timestamp: the trust bundle holds no TSA root CERTIFICATE"
verify_tst() { # $1 name, $2 base64 TimeStampResp, $3 file of the time-stamped bytes; sets tst_time
  printf '%s' "$2" | b64d > "$work/$1.der" || fail 1 "$1: not canonical standard base64"
  openssl ts -reply -in "$work/$1.der" -text > "$work/$1.txt" 2>/dev/null ||
    fail 1 "$1: not a DER RFC 3161 TimeStampResp"
  alg=$(sed -n 's/^Hash Algorithm: //p' "$work/$1.txt")
  case $alg in
    sha256 | sha384 | sha512) ;;
    *) fail 1 "$1: the message imprint uses ${alg:-no known hash}; accepted: sha256, sha384, sha512" ;;
  esac
  tst_time=$(sed -n 's/^Time stamp: //p' "$work/$1.txt" | jq -cR "$TIME_JQ openssl_epoch")
  [ -n "$tst_time" ] || fail 1 "$1: cannot read the genTime"
  openssl ts -reply -in "$work/$1.der" -token_out -out "$work/$1.tst" 2>/dev/null ||
    fail 1 "$1: the response holds no token"
  openssl pkcs7 -inform DER -in "$work/$1.tst" -print_certs > "$work/$1-certs.pem"
  openssl cms -cmsout -print -inform DER -in "$work/$1.tst" > "$work/$1-cms.txt" 2>/dev/null ||
    fail 1 "$1: the token is not CMS SignedData"
  if awk '/signerInfos:/ { s = 1 } s' "$work/$1-cms.txt" | grep -E 'algorithm: (sha1|md5|ecdsa-with-SHA1)' >/dev/null; then
    fail 1 "$1: the CMS signature uses SHA-1 or MD5"
  fi
  if ! out=$(openssl ts -verify -data "$3" -in "$work/$1.der" -CAfile "$work/roots.pem" \
    -untrusted "$work/$1-certs.pem" -attime "$(jq -n --argjson t "$tst_time" '$t[0]')" -partial_chain 2>&1); then
    why=$(printf '%s\n' "$out" | awk -F: '/:error:/ && !done { print $6 (NF > 9 ? ": " $NF : ""); done = 1 }')
    fail 1 "$1: not authentic: ${why:-openssl ts -verify failed}"
  fi
}
verify_tst timestamp "$(field .timestamp_rfc3161)" "$work/sig.bin"
issued=$(field .issued_at | jq -cR "$TIME_JQ rfc3339_epoch")
jq -n -e --argjson t "$tst_time" --argjson i "$issued" "$TIME_JQ"' $t <= ($i | plus(900)) and $i <= ($t | plus(900))' >/dev/null ||
  fail 1 "timestamp: genTime is more than 15 minutes away from issued_at $(field .issued_at)"
ok "timestamp: authentic (RFC 3161, $(sed -n 's/^Time stamp: //p' "$work/timestamp.txt"), within 15 min of issued_at)"

# Step 9b: the time rules: no recorded_at, gap timestamp or opened_at
# after the timestamp's genTime + 300 s, no gap before the run (its
# earliest recorded_at or issued_at, less 300 s), and, when the VPEC has
# opened_at, no recorded_at more than 300 s before it. Session genTimes:
# step 12.
vpec_time=$tst_time
TIMES_JQ="$TIME_JQ"'
  ([(.records[].recorded_at, .issued_at) | rfc3339_epoch] | min | plus(-300)) as $floor
  | (.records[] | select((.recorded_at | rfc3339_epoch) > ($t | plus(300)))
      | "record \(.sequence): recorded_at \(.recorded_at) is after the VPEC timestamp (+5 min)"),
    (.gaps[] | select((.timestamp | rfc3339_epoch) > ($t | plus(300)))
      | "gap \(.gap_id): timestamp \(.timestamp) is after the VPEC timestamp (+5 min)"),
    (.gaps[] | select((.timestamp | rfc3339_epoch) < $floor)
      | "gap \(.gap_id): timestamp \(.timestamp) is before the run"),
    (select(has("opened_at")) | (.opened_at | rfc3339_epoch) as $o
      | (select($o > ($t | plus(300))) | "opened_at \(.opened_at) is after the VPEC timestamp (+5 min)"),
        (.records[] | select((.recorded_at | rfc3339_epoch) < ($o | plus(-300)))
          | "record \(.sequence): recorded_at \(.recorded_at) is before the run was opened (opened_at, -5 min)"))'
problems=$(jq -r --argjson t "$vpec_time" "$TIMES_JQ" "$VPEC")
[ -z "$problems" ] || fail 1 "time: $(printf '%s\n' "$problems" | head -n 1)"
opened=""
jq -e 'has("opened_at")' "$VPEC" >/dev/null && opened=", no record before opened_at (-5 min)"
ok "time: nothing dated after the timestamp (+5 min), no gap before the run$opened"

# Step 10: governance gaps: listed, not a failure, but the chain, sequence
# and empty-run gaps must be exactly those the records show.
GAPS_JQ='
  [.records[].sequence] as $s
  | [range(0; $s | length) | (if . == 0 then 0 else $s[. - 1] end) as $p
     | select($s[.] > $p + 1) | [$p + 1, $s[.] - 1]] as $holes
  | ($hash_breaks | split(",") | map(select(. != "") | tonumber)) as $hb
  | ([.gaps[] | select(.gap_type == "sequence_missing" or .gap_type == "chain_break")
      | [.gap_type, .sequence, .sequence_end]] | group_by(.)[] | select(length > 1)
      | "\(.[0][0]) at sequence \(.[0][1]) is declared \(length) times"),
    (.gaps[] | select(.gap_type == "sequence_missing") | [.sequence, .sequence_end] as $r
      | select(any($holes[]; . == $r) | not)
      | "\(.gap_id) declares sequences \(.sequence)-\(.sequence_end) missing, which is not a hole"),
    (.gaps[] | select(.gap_type == "chain_break") | select(.sequence as $q | $hb | index($q) == null)
      | "\(.gap_id) declares a chain break at sequence \(.sequence), where the chain hash follows"),
    (if ($s | length) == 0 then [.gaps[] | select(.gap_type == "empty_run")] | select(length != 1)
       | "no records, and not exactly one empty_run gap"
     else .gaps[] | select(.gap_type == "empty_run") | "\(.gap_id): an empty_run gap on a VPEC with records" end)'
problems=$(jq -r --arg hash_breaks "$hash_breaks" "$GAPS_JQ" "$VPEC")
[ -z "$problems" ] || fail 1 "gaps: $(printf '%s\n' "$problems" | head -n 1)"
gaps=$(field '[.gaps[] | "\(.gap_type) (\(.severity))"] | join(", ")')
if [ -z "$gaps" ]; then ok "gaps: none"; else warn "gaps: $gaps"; fi

# Step 11: the summary fields, recomputed from the records.
SUMMARY_JQ='
def levels: ["mathematical", "verifiable_inference", "operator_bound", "execution", "witnessed", "attestation"];
def share($count; $total): if $total <= 0 then 0 else (($count * 20000 + $total) / (2 * $total) | floor) / 10000 end;
. as $doc | .records as $r | ($r | length) as $total
| { proof_level_floor: (if $total == 0 then "attestation"
      else [$r[].proof_level as $l | levels | index($l)] | max | levels[.] end),
    proof_level_breakdown: ($r | group_by(.proof_level) | map({key: .[0].proof_level, value: length}) | from_entries),
    provable_surface: share([$r[] | select(.proof_level | IN("mathematical", "verifiable_inference", "operator_bound"))] | length; $total),
    provable_surface_breakdown: ($r | map(if .proof_level == "operator_bound" then "bounded_inference" else .proof_level end)
      | group_by(.) | map({key: .[0], value: share(length; $total)}) | from_entries),
    total_checks_run: $total,
    checks_passed: ([$r[] | select(.check_result == "pass")] | length),
    checks_failed: ([$r[] | select(.check_result == "fail")] | length),
    is_clean: ($intact and (.gaps | length) == 0),
    environment: (.api_key_id | if startswith("pk_live_") then "production" else "sandbox" end) } as $want
| $want | keys[] as $k
| select($want[$k] != $doc[$k]) | "\($k) is \($doc[$k] | tojson), the records give \($want[$k] | tojson)"'
intact=$([ "$breaks" -eq 0 ] && echo true || echo false)
problems=$(jq -r --argjson intact "$intact" "$SUMMARY_JQ" "$VPEC")
[ -z "$problems" ] || fail 1 "summary: $(printf '%s\n' "$problems" | head -n 1)"
ok "summary: consistent ($(field '"\(.total_checks_run) checks, \(.checks_passed) passed, \(.checks_failed) failed, \(.environment)"'))"

# Step 12: witnessed reviews: reviewer signature, open and close timestamps, minimum duration.
REVIEW_JQ='
.run_id as $run | .records[$i]
| {type: "svc.review/v1", run_id: $run, check, manifest_id, check_result, commitment_hash,
   session_id: .review.session_id}
  + (if (.review.display_content_hash // "") != "" then {display_content_hash: .review.display_content_hash} else {} end)
  + (if (.review.rationale_hash // "") != "" then {rationale_hash: .review.rationale_hash} else {} end)'
reviews=0
for i in $(field '.records | to_entries[] | select(.value.review != null) | .key'); do
  fields ".records[$i] | .review + {seq: .sequence, commitment_hash}"
  printf '%s' "$reviewer_public_key" | b64d > "$work/reviewer.der" ||
    fail 1 "reviews: record $seq: reviewer_public_key is not canonical base64"
  openssl pkey -pubin -inform DER -in "$work/reviewer.der" -out "$work/reviewer.pem" 2>/dev/null ||
    fail 1 "reviews: record $seq: reviewer_public_key is not base64 SPKI DER"
  openssl pkey -pubin -in "$work/reviewer.pem" -noout -text | grep '^ED25519 Public-Key:' >/dev/null ||
    fail 1 "reviews: record $seq: reviewer_public_key is not Ed25519"
  [ "$(key_id_of "$work/reviewer.pem")" = "$reviewer_key_id" ] ||
    fail 1 "reviews: record $seq: reviewer_key_id does not match reviewer_public_key"
  printf '%s\n' "$reviewer_signature" | grep -x 'Ed25519:[A-Za-z0-9+/]\{86\}==' >/dev/null ||
    fail 1 "reviews: record $seq: reviewer_signature is not Ed25519:<base64 of 64 bytes>"
  printf '%s' "${reviewer_signature#Ed25519:}" | b64d > "$work/review-sig.bin" ||
    fail 1 "reviews: record $seq: reviewer_signature is not canonical base64"
  jq -jcS --argjson i "$i" "$REVIEW_JQ" "$VPEC" > "$work/review.json"
  openssl pkeyutl -verify -pubin -inkey "$work/reviewer.pem" -rawin -in "$work/review.json" \
    -sigfile "$work/review-sig.bin" >/dev/null 2>&1 ||
    fail 1 "reviews: record $seq: the reviewer signature does not verify"
  printf '%s' "svc.check-open.v1:$session_id" > "$work/check-open.bin"
  verify_tst check_open_tst "$check_open_tst" "$work/check-open.bin"
  opened=$tst_time
  printf '%s' "svc.check-close.v1:$session_id:$commitment_hash" > "$work/check-close.bin"
  verify_tst check_close_tst "$check_close_tst" "$work/check-close.bin"
  jq -n -e --argjson o "$opened" --argjson c "$tst_time" --argjson t "$vpec_time" "$TIME_JQ"' $o <= ($t | plus(300)) and $c <= ($t | plus(300))' \
    >/dev/null || fail 1 "time: record $seq: the review's timestamps are after the VPEC timestamp (+5 min)"
  jq -n -e --argjson o "$opened" --argjson c "$tst_time" --argjson min "$min_duration_seconds" \
    "$TIME_JQ"' ($c | seconds_since($o)) >= $min' >/dev/null ||
    fail 1 "reviews: record $seq: the review lasted $(jq -n --argjson o "$opened" --argjson c "$tst_time" '$c[0] - $o[0] + ($c[1] - $o[1]) / 1e9') s, less than min_duration_seconds"
  reviews=$((reviews + 1))
done
sessions=0
for i in $(field '.records | to_entries[] | select(.value.check_session != null) | .key'); do
  fields ".records[$i] | .check_session + {seq: .sequence, commitment_hash}"
  printf '%s' "svc.check-open.v1:$session_id" > "$work/check-open.bin"
  verify_tst check_open_tst "$check_open_tst" "$work/check-open.bin"
  opened=$tst_time
  printf '%s' "svc.check-close.v1:$session_id:$commitment_hash" > "$work/check-close.bin"
  verify_tst check_close_tst "$check_close_tst" "$work/check-close.bin"
  jq -n -e --argjson o "$opened" --argjson c "$tst_time" '$c >= $o' >/dev/null ||
    fail 1 "reviews: record $seq: the check session closed before it opened"
  jq -n -e --argjson o "$opened" --argjson c "$tst_time" --argjson t "$vpec_time" "$TIME_JQ"' $o <= ($t | plus(300)) and $c <= ($t | plus(300))' \
    >/dev/null || fail 1 "time: record $seq: the check session's timestamps are after the VPEC timestamp (+5 min)"
  sessions=$((sessions + 1))
done
if [ $((reviews + sessions)) -eq 0 ]; then ok "reviews: none present"
else ok "reviews: $reviews witnessed review(s) and $sessions check session(s) valid"; fi

# Step 13: Bounded Inference records against their signed model profiles.
JCS_JQ='
def jcs_string: "\"" + (split("\u007f") | map(tojson | .[1:-1]) | join("\u007f")) + "\"";
def zeros($n): [range(0; $n) | "0"] | join("");
def jcs_number:
  if . == 0 then "0"
  elif . < 0 then "-" + (-. | jcs_number)
  else tostring
    | capture("^(?<i>[0-9]+)([.](?<f>[0-9]+))?(e(?<s>[-+]?)(?<e>[0-9]+))?$")
    | (.i + (.f // "")) as $all
    | ($all | sub("^0+"; "")) as $nz
    | ((.i | length) + (if .s == "-" then -1 else 1 end) * ((.e // "0") | tonumber)
       - (($all | length) - ($nz | length))) as $n
    | ($nz | sub("0+$"; "")) as $d
    | ($d | length) as $k
    | if $k <= $n and $n <= 21 then $d + zeros($n - $k)
      elif 0 < $n and $n <= 21 then $d[0:$n] + "." + $d[$n:]
      elif -6 < $n and $n <= 0 then "0." + zeros(-$n) + $d
      else ($n - 1) as $x
        | $d[0:1] + (if $k > 1 then "." + $d[1:] else "" end)
          + "e" + (if $x < 0 then "-" else "+" end) + ($x | if . < 0 then -. else . end | tostring)
      end
  end;
def utf16: explode | map(if . > 65535 then (. - 65536) as $c | 55296 + ($c / 1024 | floor), 56320 + $c % 1024 else . end);
def jcs:
  if type == "object" then
    "{" + (to_entries | sort_by(.key | utf16) | map((.key | jcs_string) + ":" + (.value | jcs)) | join(",")) + "}"
  elif type == "array" then "[" + (map(jcs) | join(",")) + "]"
  elif type == "string" then jcs_string
  elif type == "number" then jcs_number
  else tojson end;'
PROFILE_JQ='
def sha256: type == "string" and test("\\Asha256:[0-9a-f]{64}\\z");
def oneof($set): . as $v | any($set[]; . == $v);
def count($lo; $hi): type == "number" and . == floor and . >= $lo and . <= $hi;
def nonempty: type == "string" and length > 0;
def check($what; f): if f then empty else "invalid \($what)" end;
def opt($name; f): (has($name) | not) or (.[$name] | f);
def classes: ["Linear", "LayerNorm", "Softmax", "GELU", "Dropout", "Other"];
(keys - ["schema", "profile_id", "model_class", "architecture", "calibrated_gpu_classes", "calibration_passes",
  "calibration_date", "safety_margin", "operators", "models", "drift_definition", "measured", "coverage",
  "signed_by", "signing_key_id", "profile_signature"]
 | .[] | "unknown field \(.)"),
(["schema", "profile_id", "model_class", "architecture", "calibrated_gpu_classes", "calibration_passes",
  "calibration_date", "safety_margin", "operators", "models", "signing_key_id", "profile_signature"] - keys
 | .[] | "missing field \(.)"),
check("schema (must be svc.profile/v1)"; .schema == "svc.profile/v1"),
check("profile_id"; .profile_id | type == "string" and
  test("\\A[a-z0-9][a-z0-9._-]{0,63}/[a-z0-9][a-z0-9._-]{0,63}-class/v(0|[1-9][0-9]{0,5})[.](0|[1-9][0-9]{0,5})[.](0|[1-9][0-9]{0,5})\\z")),
check("model_class"; .model_class | nonempty),
check("architecture"; .architecture | nonempty),
check("calibrated_gpu_classes"; .calibrated_gpu_classes | type == "array" and length > 0 and
  (unique | length) == length and all(.[]; oneof(["cpu", "a10g", "a100", "h100"]))),
check("calibration_passes"; .calibration_passes | count(1; 1099511627776)),
check("calibration_date"; .calibration_date | type == "string" and test("\\A[0-9]{4}-[0-9]{2}-[0-9]{2}\\z")),
check("safety_margin"; .safety_margin | type == "number" and . >= 1 and . <= 1000),
check("operators"; .operators | type == "object" and length > 0 and all(to_entries[];
  (.key | oneof(classes)) and
  (.value | type == "object" and keys == ["p99", "p99_9", "p99_99"] and ([.p99, .p99_9, .p99_99] |
    all(.[]; type == "number" and . >= 0) and .[0] <= .[1] and .[1] <= .[2])))),
check("models"; .models | type == "array" and length > 0 and
  ([.[].onnx_model_hash] | (unique | length) == length) and all(.[]; type == "object" and
  (keys - ["onnx_model_hash", "hub_model_id", "operator_counts"] | length == 0) and
  (.onnx_model_hash | sha256) and opt("hub_model_id"; nonempty) and
  (.operator_counts | type == "object" and length > 0 and
   all(to_entries[]; (.key | oneof(["full", "production", "residual"])) and (.value | count(1; 4294967296)))))),
check("drift_definition"; opt("drift_definition"; oneof(["svc.drift/v1", "svc.drift/v2"]))),
check("measured"; opt("measured"; type == "object" and length > 0 and all(to_entries[]; (.key | oneof(classes)) and
  (.value | type == "object" and keys == ["max", "p99", "p99_9", "p99_99", "samples"] and (.samples | count(1; 9007199254740991)) and
   ([.p99, .p99_9, .p99_99, .max] | all(.[]; type == "number" and . >= 0) and .[0] <= .[1] and .[1] <= .[2] and .[2] <= .[3]))))),
check("coverage"; opt("coverage"; type == "array" and length > 0 and length <= 64 and all(.[]; type == "object" and
  keys == ["cpu", "kernel_path", "passes"] and (.cpu | nonempty) and (.kernel_path | nonempty) and
  (.passes | count(1; 9007199254740991))))),
check("signed_by"; opt("signed_by"; nonempty)),
check("signature"; (.signing_key_id | type == "string") and
  (.profile_signature | type == "string" and test("\\AEd25519:[A-Za-z0-9+/]{86}==\\z")))'
checked=""
verified=""
for i in $(field '.records | to_entries[] | select(.value.bounded_inference != null) | .key'); do
  fields ".records[$i] | .bounded_inference + {seq: .sequence}"
  id=$profile_id
  prof=""
  for p in "$@"; do
    if [ "$(jq -r '.profile_id? // empty' "$p" 2>/dev/null)" = "$id" ]; then prof=$p; fi
  done
  [ -n "$prof" ] || fail 3 "profile: record $seq: profile $id not given (pass its signed JSON file after the trust bundle)"
  case " $verified " in *" $prof "*) ;; *) # each profile file is checked once
  [ "$(jq -s length "$prof" 2>/dev/null)" = 1 ] || fail 1 "profile: $id: not exactly one JSON value"
  [ "$(jq -c --stream . "$prof" | wc -l)" -eq "$(jq -c tostream "$prof" | wc -l)" ] ||
    fail 1 "profile: $id: an object has the same key twice"
  problems=$(jq -r "$PROFILE_JQ" "$prof" 2>&1) || problems="not a profile object"
  [ -z "$problems" ] || fail 1 "profile: $id: $(printf '%s\n' "$problems" | head -n 1)"
  [ "$(jq '[.. | strings, (objects | keys[]) | select(test("\ufffd"))] | length' "$prof")" -eq 0 ] ||
    fail 4 "profile: $id: a string holds U+FFFD, which jq also writes for invalid UTF-8"
  pkey=$(key_for "$(jq -r .signing_key_id "$prof")") ||
    fail 1 "profile: $id: signed by key $(jq -r .signing_key_id "$prof"), not a key of the trust bundle"
  jq -r .profile_signature "$prof" | sed 's/^Ed25519://' | b64d > "$work/profile-sig.bin" ||
    fail 1 "profile: $id: profile_signature is not canonical base64"
  jq -j "$JCS_JQ del(.profile_signature) | jcs" "$prof" > "$work/profile-signed.json"
  openssl pkeyutl -verify -pubin -inkey "$pkey" -rawin -in "$work/profile-signed.json" \
    -sigfile "$work/profile-sig.bin" >/dev/null 2>&1 ||
    fail 1 "profile: $id: the profile signature is invalid"
  verified="$verified $prof" ;;
  esac
  gpu=$gpu_class
  jq -e --arg g "$gpu" '.calibrated_gpu_classes | index([$g]) != null' "$prof" >/dev/null ||
    fail 1 "profile: record $seq: gpu_class $gpu is not among $id's calibrated_gpu_classes"
  want=$(jq --arg h "$onnx_model_hash" --arg m "$trace_mode" \
    'first(.models[] | select(.onnx_model_hash == $h) | .operator_counts[$m]) // "none"' "$prof")
  [ "$want" = "$operator_count" ] ||
    fail 1 "profile: record $seq: operator_count $operator_count, profile $id gives $want for this model and trace_mode"
  case "; $checked; " in
    *"; $id · $gpu; "*) ;;
    *) checked="${checked:+$checked; }$id · $gpu" ;;
  esac
done
if [ -z "$checked" ]; then ok "profile: no Bounded Inference records"; else ok "profile: consistent ($checked)"; fi

# Step 14: what transparent and selective records disclose, against their
# commitments and the manifests they carry (FORMATS.md, Disclosures).
seen=" "
shown=0
for i in $(field '.records | to_entries[] | select(.value.visibility != "opaque" or (.value | has("disclosed_input")
    or has("disclosed_output") or has("field_digests") or has("disclosures") or has("manifest"))) | .key'); do
  r=".records[$i]"
  seq=$(field "$r.sequence")
  vis=$(field "$r.visibility")
  [ "$vis" != opaque ] || fail 1 "disclosures: record $seq: an opaque record carries no disclosure (DISCLOSURE NOT ALLOWED)"
  if [ "$vis" = transparent ]; then
    [ "$(field "$r | has(\"field_digests\") or has(\"disclosures\") or has(\"manifest\")")" = false ] ||
      fail 1 "disclosures: record $seq: a transparent record carries no field_digests, disclosures or manifest (DISCLOSURE NOT ALLOWED)"
    got=$(field "$r.disclosed_input // \"\"" | b64d | sha256_hex) ||
      fail 1 "disclosures: record $seq: disclosed_input is not canonical base64 (DISCLOSURE MALFORMED)"
    [ "sha256:$got" = "$(field "$r.commitment_hash")" ] ||
      fail 1 "disclosures: record $seq: disclosed_input does not hash to commitment_hash (DISCLOSURE MISMATCH)"
    if [ "$(field "$r | has(\"output_commitment\")")" = true ]; then
      got=$(field "$r.disclosed_output // \"\"" | b64d | sha256_hex) ||
        fail 1 "disclosures: record $seq: disclosed_output is not canonical base64 (DISCLOSURE MALFORMED)"
      [ "sha256:$got" = "$(field "$r.output_commitment")" ] ||
        fail 1 "disclosures: record $seq: disclosed_output does not hash to output_commitment (DISCLOSURE MISMATCH)"
    else
      [ "$(field "$r | has(\"disclosed_output\")")" = false ] ||
        fail 1 "disclosures: record $seq: disclosed_output without output_commitment (DISCLOSURE MALFORMED)"
    fi
    shown=$((shown + 1))
    continue
  fi
  [ "$(field "$r | has(\"disclosed_input\") or has(\"disclosed_output\")")" = false ] ||
    fail 1 "disclosures: record $seq: a selective record carries no disclosed_input or disclosed_output (DISCLOSURE NOT ALLOWED)"
  [ "$(field "$r.manifest | type")" = object ] ||
    fail 1 "disclosures: record $seq: a selective record carries its manifest (DISCLOSURE MALFORMED)"
  [ "sha256:$(jq -j "$JCS_JQ $r.manifest | jcs" "$VPEC" | sha256_hex)" = "$(field "$r.manifest_id")" ] ||
    fail 1 "disclosures: record $seq: the carried manifest is not the one manifest_id names (DISCLOSURE MISMATCH)"
  field "$r.field_digests // [] | . == unique" | grep -qx true ||
    fail 1 "disclosures: record $seq: field_digests are not sorted and distinct (DISCLOSURE MALFORMED)"
  field "($r.field_digests // [] | length <= 256 and all(.[]; test(\"^sha256:[0-9a-f]{64}$\")))
      and ($r.disclosures // [] | length <= 64 and (map(.field) | length == (unique | length)))" | grep -qx true ||
    fail 1 "disclosures: record $seq: field_digests are not 256 or fewer sha256 digests, or disclosures are more than 64 or disclose a field twice (DISCLOSURE MALFORMED)"
  [ "$(jq -j "$JCS_JQ $r.disclosures // [] | jcs" "$VPEC" | wc -c)" -le 65536 ] ||
    fail 1 "disclosures: record $seq: disclosures take more than 65536 bytes in RFC 8785 form (DISCLOSURE MALFORMED)"
  # Stage names distinct; each disclose list at most 64 distinct names of
  # 1-128 UTF-8 bytes without C0, DEL, C1 or bidirectional controls.
  field "$r.manifest.stages | (map(.stage_name) | length == (unique | length)) and all(.[]; (.disclose // []) as \$d |
      (\$d | length <= 64 and length == (unique | length)) and all(\$d[]; utf8bytelength >= 1 and utf8bytelength <= 128 and
      (explode | any(.[]; . < 32 or (. >= 127 and . <= 159) or . == 1564 or . == 8206 or . == 8207
        or (. >= 8234 and . <= 8238) or (. >= 8294 and . <= 8297)) | not)))" | grep -qx true ||
    fail 1 "disclosures: record $seq: the carried manifest's stage names or disclose lists break their rules (DISCLOSURE MALFORMED)"
  [ "sha256:$(jq -j "$JCS_JQ $r.field_digests // [] | jcs" "$VPEC" | sha256_hex)" = "$(field "$r.commitment_hash")" ] ||
    fail 1 "disclosures: record $seq: field_digests do not commit to commitment_hash (DISCLOSURE MISMATCH)"
  declared=$(jq -c "$r as \$r | [\$r.manifest.stages[]? | select(.stage_name == \$r.check)][0].disclose // []" "$VPEC")
  for j in $(field "$r.disclosures // [] | keys[]"); do
    d="$r.disclosures[$j]"
    salt=$(field "$d.salt")
    case $salt in *[!A-Za-z0-9_-]*) salt= ;; esac
    [ "${#salt}" -ge 22 ] && [ "${#salt}" -le 86 ] &&
      n=$(printf '%s' "$salt" | tr '_-' '/+' | awk '{ while (length($0) % 4) $0 = $0 "="; printf "%s", $0 }' | b64d | wc -c) &&
      [ "$n" -ge 16 ] && [ "$n" -le 64 ] ||
      fail 1 "disclosures: record $seq: disclosures[$j].salt is not base64url of 16-64 bytes (DISCLOSURE MALFORMED)"
    jq -e --argjson dec "$declared" "$d.field as \$f | \$dec | index([\$f]) != null" "$VPEC" >/dev/null ||
      fail 1 "disclosures: record $seq: disclosures[$j].field is not declared by the manifest stage (UNDECLARED FIELD)"
    dg=sha256:$(jq -j "$JCS_JQ $d | [.salt, .field, .value] | jcs" "$VPEC" | sha256_hex)
    jq -e --arg dg "$dg" "$r.field_digests // [] | index([\$dg]) != null" "$VPEC" >/dev/null ||
      fail 1 "disclosures: record $seq: disclosures[$j] is not among field_digests (DISCLOSURE MISMATCH)"
    case $seen in *" $salt "*) fail 1 "disclosures: record $seq: disclosures[$j].salt is used twice (SALT REUSED)" ;; esac
    seen="$seen$salt "
  done
  for dg in $(field "$r.field_digests // [] | .[]"); do
    case $seen in *" $dg "*) fail 1 "disclosures: record $seq: digest $dg appears twice in the VPEC (SALT REUSED)" ;; esac
    seen="$seen$dg "
  done
  shown=$((shown + 1))
done
if [ "$shown" -eq 0 ]; then ok "disclosures: none (every record is opaque)"
else ok "disclosures: $shown disclosed inputs match their commitments"; fi

echo "VALID (by hand)"
