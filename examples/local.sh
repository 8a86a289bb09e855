#!/usr/bin/env bash
# local.sh: the whole flow on this machine, as a new user runs it: a service
# on loopback (SQLite and the built-in timestamp authority in OUT_DIR/data),
# an organisation and a sandbox key, workflow.sh (or the Go program with
# --go), then the VPEC verified offline with the service's trust bundle;
# with --bounded, also bounded.sh (a classifier check; needs ONNX Runtime).
# Run it again on the same OUT_DIR at will: the service, its data and the
# organisation are reused, and each run writes a new VPEC over the last.
#
#   examples/local.sh OUT_DIR [--go | --bounded]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
out=${1:?usage: local.sh OUT_DIR [--go | --bounded]}
mkdir -p "$out"
out=$(cd "$out" && pwd)
data="$out/data"

# A run before left its address: wait for this service's own.
rm -f "$out/addr"
svc serve --data-dir "$data" --addr 127.0.0.1:0 --addr-file "$out/addr" 2>"$out/serve.log" >/dev/null &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$out/addr" ] && break; sleep 0.1; done
[ -s "$out/addr" ] || { echo "local.sh: the service did not start; see $out/serve.log" >&2; exit 1; }

# A second run on the same OUT_DIR reuses the organisation (key create
# below says so if it is missing for another reason).
svc admin org create acme --data-dir "$data" >/dev/null 2>&1 || true
export SVC_API_KEY=$(svc admin key create --org acme --sandbox --data-dir "$data" 2>/dev/null)
export SVC_BASE_URL="http://$(cat "$out/addr")"
svc serve trust-bundle --data-dir "$data" > "$out/trust-bundle.pem"

case "${2:-}" in
--go)
	command -v go >/dev/null || { echo "local.sh --go: the go command is not on PATH; add it: export PATH=\$PATH:/usr/local/go/bin" >&2; exit 2; }
	(cd "$here/.." && go run ./examples/record-go "$out/vpec.json" "$here/note.txt")
	;;
--bounded)
	"$here/bounded.sh" "$out" "$data" "$out/trust-bundle.pem"
	exit
	;;
*) "$here/workflow.sh" "$out" ;;
esac
svc-verify verify "$out/vpec.json" --trust-root "$out/trust-bundle.pem"
