package cli

import (
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/app/cli/clicore"
	"github.com/svc-gov/svc/pkg/app/cli/internal/statefile"
	"github.com/svc-gov/svc/pkg/service/logwriter"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/server/setup"
)

// dataFlagCases are the rows of the data-directory flag group.
func dataFlagCases[T any](data func(*T) *dataOptions) []flagCase[T] {
	return []flagCase[T]{
		{name: "--data-dir", args: []string{"--data-dir", "/var/lib/svc"}, want: func(o *T) { data(o).dataDir = "/var/lib/svc" }},
		{name: "--database", args: []string{"--database", "postgres://db/svc"}, want: func(o *T) { data(o).database = "postgres://db/svc" }},
		{name: "SVC_DATA_DIR and SVC_DATABASE", env: map[string]string{"SVC_DATA_DIR": "/env/svc", "SVC_DATABASE": "postgres://env/svc"},
			want: func(o *T) { data(o).dataDir, data(o).database = "/env/svc", "postgres://env/svc" }},
		{name: "flag over SVC_DATA_DIR", args: []string{"--data-dir", "flag"}, env: map[string]string{"SVC_DATA_DIR": "env"}, want: func(o *T) { data(o).dataDir = "flag" }},
	}
}

// outputFlagCases are the rows of a command's own --output.
func outputFlagCases[T any](output func(*T) *string) []flagCase[T] {
	return []flagCase[T]{
		{name: "-o json", args: []string{"-o", "json"}, want: func(o *T) { *output(o) = outputJSON }},
		{name: "SVC_OUTPUT", env: map[string]string{"SVC_OUTPUT": "json"}, want: func(o *T) { *output(o) = outputJSON }},
		{name: "bad --output", args: []string{"--output", "xml"}, code: ExitUsage},
	}
}

const defaultSignedBy = "localhost/.well-known/svc/trust-bundle.pem"

func TestRegistryPublishFlags(t *testing.T) {
	defaults := func() *publishOptions {
		return &publishOptions{file: "profile.json", signedBy: defaultSignedBy, output: outputText}
	}
	cases := []flagCase[publishOptions]{
		{name: "defaults"},
		{name: "--signed-by --smtp", args: []string{"--signed-by", "svc.example/tb.pem", "--smtp", "smtp://mail:25?from=r@example.com"},
			want: func(o *publishOptions) {
				o.signedBy, o.smtp = "svc.example/tb.pem", "smtp://mail:25?from=r@example.com"
			}},
		{name: "SVC_SMTP", env: map[string]string{"SVC_SMTP": "smtp://env:25"}, want: func(o *publishOptions) { o.smtp = "smtp://env:25" }},
		{name: "two profiles", args: []string{"other.json"}, code: ExitUsage},
	}
	cases = append(cases, dataFlagCases(func(o *publishOptions) *dataOptions { return &o.data })...)
	cases = append(cases, outputFlagCases(func(o *publishOptions) *string { return &o.output })...)
	runFlagCases(t, newCmdRegistryPublish, []string{"profile.json"}, defaults, cases)
}

func TestCalibrationStatusFlags(t *testing.T) {
	defaults := func() *calStatusOptions {
		return &calStatusOptions{requestID: "cal_req_1", status: "rejected", org: "acme", output: outputText}
	}
	cases := []flagCase[calStatusOptions]{
		{name: "defaults"},
		{name: "--note", args: []string{"--note", "model not reachable"}, want: func(o *calStatusOptions) { o.note = "model not reachable" }},
		{name: "one argument too many", args: []string{"extra"}, code: ExitUsage},
	}
	cases = append(cases, dataFlagCases(func(o *calStatusOptions) *dataOptions { return &o.data })...)
	cases = append(cases, outputFlagCases(func(o *calStatusOptions) *string { return &o.output })...)
	runFlagCases(t, newCmdCalibrationStatus, []string{"cal_req_1", "rejected", "--org", "acme"}, defaults, cases)
	if got, err := parseFlags(t, newCmdCalibrationStatus, nil, "cal_req_1", "in_progress"); got != nil || exitCode(err) != ExitUsage {
		t.Errorf("without --org: exit %d (%v), want %d", exitCode(err), err, ExitUsage)
	}
	if got, err := parseFlags(t, newCmdCalibrationStatus, map[string]string{"SVC_ORG": "env-org"}, "cal_req_1", "in_progress"); err != nil || got.org != "env-org" {
		t.Errorf("SVC_ORG: %+v %v", got, err)
	}
}

func TestPublishCircuitFlags(t *testing.T) {
	defaults := func() *publishCircuitOptions {
		return &publishCircuitOptions{circuit: "mlp_head", signedBy: defaultSignedBy, output: outputText}
	}
	cases := []flagCase[publishCircuitOptions]{
		{name: "defaults"},
		{name: "ceremony keys", args: []string{"--model", "head.onnx", "--verifying-key", "v.key", "--proving-key", "p.key", "--transcript", "t.json", "--signed-by", "s"},
			want: func(o *publishCircuitOptions) {
				o.model, o.vk, o.pk, o.transcript, o.signedBy = "head.onnx", "v.key", "p.key", "t.json", "s"
			}},
		{name: "--dev-setup --proving-key-out", args: []string{"--dev-setup", "--proving-key-out", "p.key"},
			want: func(o *publishCircuitOptions) { o.devSetup, o.out = true, "p.key" }},
		{name: "--dev-setup without --proving-key-out", args: []string{"--dev-setup"}, code: ExitUsage},
		{name: "SVC_TRANSCRIPT", env: map[string]string{"SVC_TRANSCRIPT": "env.json"}, want: func(o *publishCircuitOptions) { o.transcript = "env.json" }},
		{name: "an argument", args: []string{"head.onnx"}, code: ExitUsage},
	}
	cases = append(cases, dataFlagCases(func(o *publishCircuitOptions) *dataOptions { return &o.data })...)
	cases = append(cases, outputFlagCases(func(o *publishCircuitOptions) *string { return &o.output })...)
	runFlagCases(t, newCmdPublishCircuit, []string{"--circuit", "mlp_head"}, defaults, cases)
}

func TestGetCircuitFlags(t *testing.T) {
	defaults := func() *getCircuitOptions { return &getCircuitOptions{co: defaultClient(), hash: testHash} }
	cases := []flagCase[getCircuitOptions]{
		{name: "--model-hash"},
		{name: "--circuit-dir --trust-root", args: []string{"--circuit-dir", "c", "--trust-root", "tb.pem"},
			want: func(o *getCircuitOptions) {
				o.cache, o.trust = "c", clicore.TrustOptions{TrustRoot: "tb.pem", FromFlag: true}
			}},
		{name: "SVC_TRUST_ROOT and SVC_CIRCUIT_DIR", env: map[string]string{"SVC_TRUST_ROOT": "env.pem", "SVC_CIRCUIT_DIR": "envc"},
			want: func(o *getCircuitOptions) { o.cache, o.trust = "envc", clicore.TrustOptions{TrustRoot: "env.pem"} }},
		{name: "--model as well", args: []string{"--model", "head.onnx"}, code: ExitUsage},
		{name: "an argument", args: []string{"x"}, code: ExitUsage},
	}
	cases = append(cases, clientFlagCases(func(o *getCircuitOptions) *clientOptions { return &o.co })...)
	runFlagCases(t, newCmdGetCircuit, []string{"--model-hash", testHash}, defaults, cases)
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"--circuit-id", testHash}, 0},
		{[]string{"--model", "head.onnx"}, 0},
		{nil, ExitUsage},
		{[]string{"--model-hash", "sha256:00"}, ExitUsage},
	} {
		if _, err := parseFlags(t, newCmdGetCircuit, nil, tc.args...); exitCode(err) != tc.code {
			t.Errorf("svc registry get-circuit %q: exit %d (%v), want %d", tc.args, exitCode(err), err, tc.code)
		}
	}
}

func TestRecordProofFlags(t *testing.T) {
	t.Run("head", func(t *testing.T) {
		defaults := func() *recordProofOptions {
			return &recordProofOptions{co: defaultClient(), so: stateOptions{path: statefile.DefaultPath}, check: "tox", manifestID: "sha256:m", model: "head.onnx", vector: "emb.json"}
		}
		cases := []flagCase[recordProofOptions]{
			{name: "defaults"},
			{name: "--pass-class --proving-key --circuit-dir --trust-root", args: []string{"--pass-class", "1", "--proving-key", "h.pk", "--circuit-dir", "c", "--trust-root", "tb.pem"},
				want: func(o *recordProofOptions) {
					o.passClass, o.pkFile, o.cache, o.trust = 1, "h.pk", "c", clicore.TrustOptions{TrustRoot: "tb.pem", FromFlag: true}
				}},
			{name: "--circuit-entry as well", args: []string{"--circuit-entry", "t.json"}, code: ExitUsage},
			{name: "bad --pass-class", args: []string{"--pass-class", "one"}, code: ExitUsage},
		}
		cases = append(cases, clientFlagCases(func(o *recordProofOptions) *clientOptions { return &o.co })...)
		cases = append(cases, stateFlagCases(func(o *recordProofOptions) *stateOptions { return &o.so })...)
		runFlagCases(t, newCmdRecordProof, []string{"--check", "tox", "--manifest-id", "sha256:m", "--model", "head.onnx", "--input-vector", "emb.json"}, defaults, cases)
	})
	t.Run("condition", func(t *testing.T) {
		defaults := func() *recordProofOptions {
			return &recordProofOptions{co: defaultClient(), so: stateOptions{path: statefile.DefaultPath}, check: "score", manifestID: "sha256:m", entry: "t.json"}
		}
		runFlagCases(t, newCmdRecordProof, []string{"--check", "score", "--manifest-id", "sha256:m", "--circuit-entry", "t.json"}, defaults, []flagCase[recordProofOptions]{
			{name: "defaults"},
			{name: "--value --bound", args: []string{"--value", "731", "--bound", "500"}, want: func(o *recordProofOptions) { o.value, o.bound = 731, 500 }},
			{name: "SVC_BOUND", env: map[string]string{"SVC_BOUND": "12"}, want: func(o *recordProofOptions) { o.bound = 12 }},
			{name: "negative --value", args: []string{"--value", "-1"}, code: ExitUsage},
			{name: "--value beyond uint32", args: []string{"--value", "4294967296"}, code: ExitUsage},
		})
	})
	for _, args := range [][]string{
		{"--manifest-id", "m", "--circuit-entry", "t.json"},
		{"--check", "c", "--circuit-entry", "t.json"},
		{"--check", "c", "--manifest-id", "m"},
		{"--check", "c", "--manifest-id", "m", "--model", "head.onnx"},
	} {
		if got, err := parseFlags(t, newCmdRecordProof, nil, args...); got != nil || exitCode(err) != ExitUsage {
			t.Errorf("svc record-proof %q: exit %d (%v), want %d", args, exitCode(err), err, ExitUsage)
		}
	}
}

func TestAdminFlags(t *testing.T) {
	t.Run("org create", func(t *testing.T) {
		cases := []flagCase[orgCreateOptions]{
			{name: "defaults"},
			{name: "--tier", args: []string{"--tier", "enterprise"}, want: func(o *orgCreateOptions) { o.tier = "enterprise" }},
			{name: "SVC_TIER", env: map[string]string{"SVC_TIER": "enterprise"}, want: func(o *orgCreateOptions) { o.tier = "enterprise" }},
			{name: "two names", args: []string{"initech"}, code: ExitUsage},
		}
		cases = append(cases, dataFlagCases(func(o *orgCreateOptions) *dataOptions { return &o.data })...)
		cases = append(cases, outputFlagCases(func(o *orgCreateOptions) *string { return &o.output })...)
		runFlagCases(t, newCmdOrgCreate, []string{"globex"}, func() *orgCreateOptions {
			return &orgCreateOptions{name: "globex", tier: "standard", output: outputText}
		}, cases)
	})
	t.Run("key create", func(t *testing.T) {
		cases := []flagCase[keyCreateOptions]{
			{name: "--sandbox"},
			{name: "--live instead", args: []string{"--sandbox=false", "--live"}, want: func(o *keyCreateOptions) { o.sandbox, o.live = false, true }},
			{name: "--sandbox and --live", args: []string{"--live"}, code: ExitUsage},
			{name: "SVC_LIVE as well", env: map[string]string{"SVC_LIVE": "true"}, code: ExitUsage},
			{name: "SVC_ORG under the flag", env: map[string]string{"SVC_ORG": "initech"}},
			{name: "an argument", args: []string{"acme"}, code: ExitUsage},
		}
		cases = append(cases, dataFlagCases(func(o *keyCreateOptions) *dataOptions { return &o.data })...)
		cases = append(cases, outputFlagCases(func(o *keyCreateOptions) *string { return &o.output })...)
		runFlagCases(t, newCmdKeyCreate, []string{"--org", "acme", "--sandbox"}, func() *keyCreateOptions {
			return &keyCreateOptions{org: "acme", sandbox: true, output: outputText}
		}, cases)
		for _, args := range [][]string{{"--org", "acme"}, {"--sandbox"}} {
			if got, err := parseFlags(t, newCmdKeyCreate, nil, args...); got != nil || exitCode(err) != ExitUsage {
				t.Errorf("svc admin key create %q: exit %d (%v), want %d", args, exitCode(err), err, ExitUsage)
			}
		}
		if got, err := parseFlags(t, newCmdKeyCreate, map[string]string{"SVC_ORG": "env-org"}, "--live"); err != nil || got.org != "env-org" || !got.live {
			t.Errorf("SVC_ORG: %+v %v", got, err)
		}
	})
	t.Run("key list", func(t *testing.T) {
		cases := []flagCase[keyListOptions]{
			{name: "defaults"},
			{name: "--org", args: []string{"--org", "acme"}, want: func(o *keyListOptions) { o.org = "acme" }},
			{name: "an argument", args: []string{"acme"}, code: ExitUsage},
		}
		cases = append(cases, dataFlagCases(func(o *keyListOptions) *dataOptions { return &o.data })...)
		cases = append(cases, outputFlagCases(func(o *keyListOptions) *string { return &o.output })...)
		runFlagCases(t, newCmdKeyList, nil, func() *keyListOptions { return &keyListOptions{output: outputText} }, cases)
	})
	t.Run("key revoke", func(t *testing.T) {
		cases := []flagCase[keyRevokeOptions]{{name: "defaults"}, {name: "two keys", args: []string{"pk_live_2"}, code: ExitUsage}}
		cases = append(cases, dataFlagCases(func(o *keyRevokeOptions) *dataOptions { return &o.data })...)
		cases = append(cases, outputFlagCases(func(o *keyRevokeOptions) *string { return &o.output })...)
		runFlagCases(t, newCmdKeyRevoke, []string{"pk_live_1"}, func() *keyRevokeOptions { return &keyRevokeOptions{keyID: "pk_live_1", output: outputText} }, cases)
	})
}

func TestServeFlags(t *testing.T) {
	defaults := func() *serveOptions {
		return &serveOptions{addr: "127.0.0.1:8080", maxBodyBytes: server.DefaultMaxBodyBytes, maxRecordsPerRun: server.DefaultMaxRecordsPerRun,
			logFormat: "text", shutdown: 30 * time.Second, sandboxRate: server.DefaultSandboxRate, sandboxBurst: server.DefaultSandboxBurst,
			tlog: setup.LogOptions{CheckpointInterval: logwriter.DefaultCheckpointInterval, WitnessTimeout: logwriter.DefaultWitnessTimeout}}
	}
	cases := []flagCase[serveOptions]{
		{name: "defaults"},
		{name: "--addr --addr-file --log-format", args: []string{"--addr", "127.0.0.1:0", "--addr-file", "a.addr", "--log-format", "json"},
			want: func(o *serveOptions) { o.addr, o.addrFile, o.logFormat = "127.0.0.1:0", "a.addr", "json" }},
		{name: "limits", args: []string{"--max-body-bytes", "1024", "--max-records-per-run", "5", "--shutdown-timeout", "2s", "--sandbox-rate", "0", "--sandbox-burst", "3"},
			want: func(o *serveOptions) {
				o.maxBodyBytes, o.maxRecordsPerRun, o.shutdown, o.sandboxRate, o.sandboxBurst = 1024, 5, 2*time.Second, 0, 3
			}},
		{name: "external TSAs", args: []string{"--tsa-url", "http://tsa1", "--tsa-url", "http://tsa2", "--tsa-fallback-builtin", "--tsa-root", "r.pem"},
			want: func(o *serveOptions) {
				o.tsaURLs, o.tsaFallbackBuiltin, o.tsaRoots = []string{"http://tsa1", "http://tsa2"}, true, []string{"r.pem"}
			}},
		{name: "SVC_ADDR and SVC_LOG_FORMAT", env: map[string]string{"SVC_ADDR": "0.0.0.0:9090", "SVC_LOG_FORMAT": "json"},
			want: func(o *serveOptions) { o.addr, o.logFormat = "0.0.0.0:9090", "json" }},
		{name: "--metrics-addr --otel-endpoint", args: []string{"--metrics-addr", "127.0.0.1:9091", "--otel-endpoint", "http://127.0.0.1:4318"},
			want: func(o *serveOptions) { o.metricsAddr, o.otelEndpoint = "127.0.0.1:9091", "http://127.0.0.1:4318" }},
		{name: "SVC_METRICS_ADDR", env: map[string]string{"SVC_METRICS_ADDR": "127.0.0.1:9092"}, want: func(o *serveOptions) { o.metricsAddr = "127.0.0.1:9092" }},
		{name: "--metrics-addr same as --addr", args: []string{"--metrics-addr", "127.0.0.1:8080"}, code: ExitUsage},
		{name: "--otel-endpoint not a URL", args: []string{"--otel-endpoint", "127.0.0.1:4318"}, code: ExitUsage},
		{name: "SVC_TSA_URL", env: map[string]string{"SVC_TSA_URL": "http://env-tsa"}, want: func(o *serveOptions) { o.tsaURLs = []string{"http://env-tsa"} }},
		{name: "transparency log", args: []string{"--tlog-origin", "svc.example.com/log", "--tlog-mysql", "u:p@tcp(127.0.0.1:3306)/log", "--witness-policy", "w.txt",
			"--tlog-checkpoint-interval", "2s", "--witness-timeout", "3s"},
			want: func(o *serveOptions) {
				o.tlog = setup.LogOptions{Origin: "svc.example.com/log", MySQLDSN: "u:p@tcp(127.0.0.1:3306)/log", WitnessPolicyFile: "w.txt",
					CheckpointInterval: 2 * time.Second, WitnessTimeout: 3 * time.Second}
			}},
		{name: "--no-tlog", args: []string{"--no-tlog"}, want: func(o *serveOptions) { o.noTlog = true }},
		{name: "--no-tlog with --witness-policy", args: []string{"--no-tlog", "--witness-policy", "w.txt"}, code: ExitUsage},
		{name: "--tlog-checkpoint-interval below 100ms", args: []string{"--tlog-checkpoint-interval", "50ms"}, code: ExitUsage},
		{name: "--tlog-mysql below 1s", args: []string{"--tlog-mysql", "u@tcp(h)/d", "--tlog-checkpoint-interval", "500ms"}, code: ExitUsage},
		{name: "key URIs", args: []string{"--signing-key", "pkcs11:object=v", "--profile-key", "file:///p.pem", "--tsa-key", "pkcs11:object=t", "--log-key", "pkcs11:object=l", "--root-key", "file:///r.pem", "--pkcs11-module", "/m.so"},
			want: func(o *serveOptions) {
				o.keys = keyOptions{vpec: "pkcs11:object=v", profile: "file:///p.pem", tsa: "pkcs11:object=t", log: "pkcs11:object=l", pkcs11Module: "/m.so"}
				o.rootKey.uri = "file:///r.pem"
			}},
		{name: "SVC_SIGNING_KEY and SVC_PKCS11_MODULE", env: map[string]string{"SVC_SIGNING_KEY": "pkcs11:object=v", "SVC_PKCS11_MODULE": "/m.so"},
			want: func(o *serveOptions) { o.keys.vpec, o.keys.pkcs11Module = "pkcs11:object=v", "/m.so" }},
		{name: "no PIN flag", args: []string{"--pkcs11-pin", "1234"}, code: ExitUsage},
		{name: "bad --log-format", args: []string{"--log-format", "yaml"}, code: ExitUsage},
		{name: "--tsa-fallback-builtin without --tsa-url", args: []string{"--tsa-fallback-builtin"}, code: ExitUsage},
		{name: "--max-records-per-run 0", args: []string{"--max-records-per-run", "0"}, code: ExitUsage},
		{name: "bad --shutdown-timeout", args: []string{"--shutdown-timeout", "soon"}, code: ExitUsage},
		{name: "an argument", args: []string{"now"}, code: ExitUsage},
	}
	cases = append(cases, dataFlagCases(func(o *serveOptions) *dataOptions { return &o.data })...)
	runFlagCases(t, newCmdServe, nil, defaults, cases)
}

func TestKeygenAndTSAInitFlags(t *testing.T) {
	t.Run("keygen", func(t *testing.T) {
		cases := []flagCase[keygenOptions]{
			{name: "defaults"},
			{name: "--dir --tsa-dir", args: []string{"--dir", "k", "--tsa-dir", "t"}, want: func(o *keygenOptions) { o.dir, o.tsaDir = "k", "t" }},
			{name: "SVC_TSA_DIR", env: map[string]string{"SVC_TSA_DIR": "envt"}, want: func(o *keygenOptions) { o.tsaDir = "envt" }},
			{name: "an argument", args: []string{"k"}, code: ExitUsage},
		}
		cases = append(cases, outputFlagCases(func(o *keygenOptions) *string { return &o.output })...)
		runFlagCases(t, newCmdKeygen, nil, func() *keygenOptions { return &keygenOptions{dir: defaultKeyDir, output: outputText} }, cases)
	})
	t.Run("tsa init", func(t *testing.T) {
		cases := []flagCase[tsaInitOptions]{
			{name: "defaults"},
			{name: "--dir --name", args: []string{"--dir", "t", "--name", "Example TSA"}, want: func(o *tsaInitOptions) { o.dir, o.name = "t", "Example TSA" }},
			{name: "SVC_NAME", env: map[string]string{"SVC_NAME": "Env TSA"}, want: func(o *tsaInitOptions) { o.name = "Env TSA" }},
			{name: "an argument", args: []string{"t"}, code: ExitUsage},
		}
		cases = append(cases, outputFlagCases(func(o *tsaInitOptions) *string { return &o.output })...)
		runFlagCases(t, newCmdTSAInit, nil, func() *tsaInitOptions { return &tsaInitOptions{dir: defaultTSADir, output: outputText} }, cases)
	})
}

func TestExportFlags(t *testing.T) {
	defaults := func() *exportOptions {
		return &exportOptions{path: "vpec.json", format: formatSigstoreBundle, out: "-"}
	}
	runFlagCases(t, newCmdExport, []string{"vpec.json"}, defaults, []flagCase[exportOptions]{
		{name: "defaults"},
		{name: "every file", args: []string{"--artifact", "a.json", "--out", "b.json", "--trusted-root-out", "tr.json", "--key-out", "k.pub", "--force"},
			want: func(o *exportOptions) {
				o.artifact, o.out, o.trustedRoot, o.keyOut, o.force = "a.json", "b.json", "tr.json", "k.pub", true
			}},
		{name: "--trust-root", args: []string{"--trust-root", "tb.pem"}, want: func(o *exportOptions) {
			o.trust.TrustOptions = clicore.TrustOptions{TrustRoot: "tb.pem", FromFlag: true}
		}},
		{name: "SVC_TRUST_ROOT", env: map[string]string{"SVC_TRUST_ROOT": "env.pem"}, want: func(o *exportOptions) { o.trust.TrustOptions = clicore.TrustOptions{TrustRoot: "env.pem"} }},
		{name: "SVC_KEY_OUT", env: map[string]string{"SVC_KEY_OUT": "env.pub"}, want: func(o *exportOptions) { o.keyOut = "env.pub" }},
		{name: "unknown --format", args: []string{"--format", "in-toto"}, code: ExitUsage},
		{name: "two VPECs", args: []string{"b.json"}, code: ExitUsage},
	})
}
