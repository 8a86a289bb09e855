package cli

import (
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/app/cli/clicore"
	"github.com/svc-gov/svc/pkg/app/cli/internal/statefile"
	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/client/bounded"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// defaultClient is the client flag group with nothing given.
func defaultClient() clientOptions {
	return clientOptions{timeout: client.DefaultTimeout, output: outputText}
}

// clientFlagCases are the rows every command with the client flag group
// shares: each flag, the environment behind it, the flag over the
// environment, and a bad --output. co picks the group out of T.
func clientFlagCases[T any](co func(*T) *clientOptions) []flagCase[T] {
	return []flagCase[T]{
		{name: "--base-url", args: []string{"--base-url", "http://svc.example:8080"}, want: func(o *T) { co(o).baseURL = "http://svc.example:8080" }},
		{name: "--api-key", args: []string{"--api-key", "pk_live_x"}, want: func(o *T) { co(o).apiKey = "pk_live_x" }},
		{name: "--queue-path", args: []string{"--queue-path", "q.jsonl"}, want: func(o *T) { co(o).queuePath = "q.jsonl" }},
		{name: "--timeout", args: []string{"--timeout", "90s"}, want: func(o *T) { co(o).timeout = 90 * time.Second }},
		{name: "--output json", args: []string{"--output", "json"}, want: func(o *T) { co(o).output = outputJSON }},
		{name: "-o json", args: []string{"-o", "json"}, want: func(o *T) { co(o).output = outputJSON }},
		{name: "SVC_API_KEY and SVC_BASE_URL", env: map[string]string{"SVC_API_KEY": "pk_sb_env", "SVC_BASE_URL": "http://env:1"},
			want: func(o *T) { co(o).apiKey, co(o).baseURL = "pk_sb_env", "http://env:1" }},
		{name: "SVC_QUEUE_PATH and SVC_TIMEOUT", env: map[string]string{"SVC_QUEUE_PATH": "env.jsonl", "SVC_TIMEOUT": "1m"},
			want: func(o *T) { co(o).queuePath, co(o).timeout = "env.jsonl", time.Minute }},
		{name: "flag over environment", args: []string{"--api-key", "pk_live_flag"}, env: map[string]string{"SVC_API_KEY": "pk_sb_env"},
			want: func(o *T) { co(o).apiKey = "pk_live_flag" }},
		{name: "bad --output", args: []string{"--output", "yaml"}, code: ExitUsage},
		{name: "bad SVC_TIMEOUT", env: map[string]string{"SVC_TIMEOUT": "soon"}, code: ExitUsage},
		{name: "unknown flag", args: []string{"--no-such-flag"}, code: ExitUsage},
	}
}

// stateFlagCases are the rows of the --state flag.
func stateFlagCases[T any](so func(*T) *stateOptions) []flagCase[T] {
	return []flagCase[T]{
		{name: "--state", args: []string{"--state", "ci.json"}, want: func(o *T) { so(o).path = "ci.json" }},
		{name: "SVC_STATE", env: map[string]string{"SVC_STATE": "env.json"}, want: func(o *T) { so(o).path = "env.json" }},
	}
}

func TestCloseFlags(t *testing.T) {
	defaults := func() *closeOptions {
		return &closeOptions{co: defaultClient(), so: stateOptions{path: statefile.DefaultPath}, out: "vpec.json"}
	}
	cases := []flagCase[closeOptions]{
		{name: "defaults"},
		{name: "--out --force --require-passed", args: []string{"--out", "v.json", "--force", "--require-passed"},
			want: func(o *closeOptions) { o.out, o.force, o.requirePassed = "v.json", true, true }},
		{name: "SVC_OUT", env: map[string]string{"SVC_OUT": "env.json"}, want: func(o *closeOptions) { o.out = "env.json" }},
		{name: "--wait-receipt", args: []string{"--wait-receipt", "5s"}, want: func(o *closeOptions) { o.waitReceipt = 5 * time.Second }},
		{name: "--wait-receipt too long", args: []string{"--wait-receipt", "2m"}, code: ExitUsage},
		{name: "--wait-receipt negative", args: []string{"--wait-receipt", "-1s"}, code: ExitUsage},
		{name: "an argument", args: []string{"vpec.json"}, code: ExitUsage},
	}
	cases = append(cases, clientFlagCases(func(o *closeOptions) *clientOptions { return &o.co })...)
	cases = append(cases, stateFlagCases(func(o *closeOptions) *stateOptions { return &o.so })...)
	runFlagCases(t, newCmdClose, nil, defaults, cases)
}

func TestRunOpenFlags(t *testing.T) {
	defaults := func() *runOpenOptions {
		return &runOpenOptions{co: defaultClient(), so: stateOptions{path: statefile.DefaultPath}}
	}
	cases := []flagCase[runOpenOptions]{
		{name: "defaults"},
		{name: "--workflow-id", args: []string{"--workflow-id", "claims"}, want: func(o *runOpenOptions) { o.workflow = "claims" }},
		{name: "SVC_WORKFLOW_ID", env: map[string]string{"SVC_WORKFLOW_ID": "env-flow"}, want: func(o *runOpenOptions) { o.workflow = "env-flow" }},
		{name: "--policy repeated", args: []string{"--policy", "hipaa", "--policy", "gdpr,eu"}, want: func(o *runOpenOptions) { o.policy = []string{"hipaa", "gdpr,eu"} }},
		{name: "--policy-pack", args: []string{"--policy-pack", "pp_1"}, want: func(o *runOpenOptions) { o.pack = "pp_1" }},
		{name: "an argument", args: []string{"claims"}, code: ExitUsage},
	}
	cases = append(cases, clientFlagCases(func(o *runOpenOptions) *clientOptions { return &o.co })...)
	cases = append(cases, stateFlagCases(func(o *runOpenOptions) *stateOptions { return &o.so })...)
	runFlagCases(t, newCmdRunOpen, nil, defaults, cases)
}

func TestQueueFlags(t *testing.T) {
	t.Run("status", func(t *testing.T) {
		cases := []flagCase[queueStatusOptions]{{name: "defaults"}, {name: "an argument", args: []string{"x"}, code: ExitUsage}}
		cases = append(cases, clientFlagCases(func(o *queueStatusOptions) *clientOptions { return &o.co })...)
		runFlagCases(t, newCmdQueueStatus, nil, func() *queueStatusOptions { return &queueStatusOptions{co: defaultClient()} }, cases)
	})
	t.Run("flush", func(t *testing.T) {
		cases := []flagCase[queueFlushOptions]{{name: "defaults"}, {name: "an argument", args: []string{"x"}, code: ExitUsage}}
		cases = append(cases, clientFlagCases(func(o *queueFlushOptions) *clientOptions { return &o.co })...)
		cases = append(cases, stateFlagCases(func(o *queueFlushOptions) *stateOptions { return &o.so })...)
		runFlagCases(t, newCmdQueueFlush, nil, func() *queueFlushOptions {
			return &queueFlushOptions{co: defaultClient(), so: stateOptions{path: statefile.DefaultPath}}
		}, cases)
	})
}

func TestVPECGetFlags(t *testing.T) {
	defaults := func() *vpecGetOptions {
		return &vpecGetOptions{co: defaultClient(), id: "run_1", receiptWait: defaultReceiptWait}
	}
	cases := []flagCase[vpecGetOptions]{
		{name: "a run id"},
		{name: "--out --force", args: []string{"--out", "v.json", "--force"}, want: func(o *vpecGetOptions) { o.out, o.force = "v.json", true }},
		{name: "--receipt-wait", args: []string{"--receipt-wait", "0s"}, want: func(o *vpecGetOptions) { o.receiptWait = 0 }},
		{name: "--no-receipt", args: []string{"--no-receipt"}, want: func(o *vpecGetOptions) { o.noReceipt = true }},
		{name: "--receipt-wait too long", args: []string{"--receipt-wait", "61s"}, code: ExitUsage},
		{name: "two ids", args: []string{"vpec_2"}, code: ExitUsage},
	}
	cases = append(cases, clientFlagCases(func(o *vpecGetOptions) *clientOptions { return &o.co })...)
	runFlagCases(t, newCmdVPECGet, []string{"run_1"}, defaults, cases)
	for _, tc := range []struct {
		id   string
		code int
	}{{"vpec_1", 0}, {"run_1", 0}, {"1234", ExitUsage}, {"vpec", ExitUsage}, {"", ExitUsage}} {
		got, err := parseFlags(t, newCmdVPECGet, nil, tc.id)
		if c := exitCode(err); c != tc.code || (c == 0 && got.id != tc.id) {
			t.Errorf("svc vpec get %q: exit %d (%v), want %d", tc.id, c, err, tc.code)
		}
	}
}

func TestManifestRegisterFlags(t *testing.T) {
	defaults := func() *manifestRegisterOptions {
		return &manifestRegisterOptions{co: defaultClient(), file: "pii.yaml"}
	}
	cases := []flagCase[manifestRegisterOptions]{
		{name: "a file"},
		{name: "two files", args: []string{"b.yaml"}, code: ExitUsage},
	}
	cases = append(cases, clientFlagCases(func(o *manifestRegisterOptions) *clientOptions { return &o.co })...)
	runFlagCases(t, newCmdManifestRegister, []string{"pii.yaml"}, defaults, cases)
}

func TestRecordFlags(t *testing.T) {
	defaultInference := inferenceOptions{gpuClass: "cpu", mode: bounded.Auto, threshold: 0.5, label: 1}
	t.Run("check", func(t *testing.T) {
		defaults := func() *recordOptions {
			return &recordOptions{co: defaultClient(), so: stateOptions{path: statefile.DefaultPath}, check: "pii", manifestID: "sha256:m",
				result: "pass", visibility: string(vpec.Opaque), inf: defaultInference}
		}
		cases := []flagCase[recordOptions]{
			{name: "defaults"},
			{name: "--input", args: []string{"--input", "some text"}, want: func(o *recordOptions) { o.input = "some text" }},
			{name: "--input-file", args: []string{"--input-file", "note.txt"}, want: func(o *recordOptions) { o.inputFile = "note.txt" }},
			{name: "--output-file", args: []string{"--output-file", "out.txt"}, want: func(o *recordOptions) { o.outputFile = "out.txt" }},
			{name: "--details repeated", args: []string{"--details", "model=v3", "--details", "a=b,c"}, want: func(o *recordOptions) { o.details = []string{"model=v3", "a=b,c"} }},
			{name: "--visibility transparent", args: []string{"--visibility", "transparent"}, want: func(o *recordOptions) { o.visibility = "transparent" }},
			{name: "--visibility selective --manifest-file --disclosures-out", args: []string{"--visibility", "selective", "--manifest-file", "kyc.yaml", "--disclosures-out", "d.json"},
				want: func(o *recordOptions) {
					o.visibility, o.manifestFile, o.disclosuresOut = "selective", "kyc.yaml", "d.json"
				}},
			{name: "--result fail", args: []string{"--result", "fail"}, want: func(o *recordOptions) { o.result = "fail" }},
			{name: "flag over SVC_MANIFEST_ID, SVC_VISIBILITY", args: []string{"--manifest-id", "sha256:flag"}, env: map[string]string{"SVC_MANIFEST_ID": "sha256:env", "SVC_VISIBILITY": "transparent"},
				want: func(o *recordOptions) { o.manifestID, o.visibility = "sha256:flag", "transparent" }},
			{name: "bad --result", args: []string{"--result", "passed"}, code: ExitUsage},
			{name: "bad --visibility", args: []string{"--visibility", "public"}, code: ExitUsage},
			{name: "bad SVC_VISIBILITY", env: map[string]string{"SVC_VISIBILITY": "public"}, code: ExitUsage},
			{name: "--disclosures-out without selective", args: []string{"--disclosures-out", "d.json"}, code: ExitUsage},
			{name: "--condition-entry without --model", args: []string{"--condition-entry", "t.json"}, code: ExitUsage},
			{name: "--conditions-out without --model", args: []string{"--conditions-out", "c.json"}, code: ExitUsage},
			{name: "--model with --result", args: []string{"--model", "m"}, code: ExitUsage},
			{name: "an argument", args: []string{"note.txt"}, code: ExitUsage},
		}
		cases = append(cases, clientFlagCases(func(o *recordOptions) *clientOptions { return &o.co })...)
		cases = append(cases, stateFlagCases(func(o *recordOptions) *stateOptions { return &o.so })...)
		runFlagCases(t, newCmdRecord, []string{"--check", "pii", "--manifest-id", "sha256:m", "--result", "pass"}, defaults, cases)
	})
	t.Run("model", func(t *testing.T) {
		defaults := func() *recordOptions {
			o := &recordOptions{co: defaultClient(), so: stateOptions{path: statefile.DefaultPath}, check: "tox", manifestFile: "m.yaml",
				visibility: string(vpec.Opaque), inf: defaultInference}
			o.inf.model = "model"
			return o
		}
		cases := []flagCase[recordOptions]{
			{name: "defaults"},
			{name: "--gpu-class --mode --threshold --label", args: []string{"--gpu-class", "nvidia-a100", "--mode", "residual", "--threshold", "0.7", "--label", "0"},
				want: func(o *recordOptions) {
					o.inf.gpuClass, o.inf.mode, o.inf.threshold, o.inf.label = "nvidia-a100", "residual", 0.7, 0
				}},
			{name: "--trace-out --profile-dir --ort-lib", args: []string{"--trace-out", "t.json", "--profile-dir", "p", "--ort-lib", "libort.so"},
				want: func(o *recordOptions) { o.inf.traceOut, o.inf.dir, o.inf.mo.ortLib = "t.json", "p", "libort.so" }},
			{name: "SVC_PROFILE_DIR and SVC_ORT_LIB", env: map[string]string{"SVC_PROFILE_DIR": "envp", "SVC_ORT_LIB": "env.so"},
				want: func(o *recordOptions) { o.inf.dir, o.inf.mo.ortLib = "envp", "env.so" }},
			{name: "condition circuits", args: []string{"--condition-entry", "t.json", "--condition-proving-key", "t.pk", "--condition-entry", "b.json",
				"--condition-proving-key", "b.pk", "--conditions-out", "c.json", "--trust-root", "bundle.pem"},
				want: func(o *recordOptions) {
					o.inf.condEntries, o.inf.condKeys, o.inf.condOut = []string{"t.json", "b.json"}, []string{"t.pk", "b.pk"}, "c.json"
					o.inf.trust = clicore.TrustOptions{TrustRoot: "bundle.pem", FromFlag: true}
				}},
			{name: "SVC_TRUST_ROOT", env: map[string]string{"SVC_TRUST_ROOT": "env.pem"},
				want: func(o *recordOptions) { o.inf.trust = clicore.TrustOptions{TrustRoot: "env.pem"} }},
			{name: "bad --threshold", args: []string{"--threshold", "high"}, code: ExitUsage},
			{name: "--conditions-out without circuits", args: []string{"--conditions-out", "c.json"}, code: ExitUsage},
		}
		runFlagCases(t, newCmdRecord, []string{"--check", "tox", "--manifest-file", "m.yaml", "--model", "model"}, defaults, cases)
	})
	t.Run("required", func(t *testing.T) {
		for _, args := range [][]string{
			{"--manifest-id", "m", "--result", "pass"},
			{"--check", "c", "--result", "pass"},
			{"--check", "c", "--manifest-id", "m"},
		} {
			if got, err := parseFlags(t, newCmdRecord, nil, args...); got != nil || exitCode(err) != ExitUsage {
				t.Errorf("svc record %q: exit %d (%v), want %d", args, exitCode(err), err, ExitUsage)
			}
		}
	})
}

const testHash = "sha256:1111111111111111111111111111111111111111111111111111111111111111"

func TestRegistryClientFlags(t *testing.T) {
	t.Run("list", func(t *testing.T) {
		cases := []flagCase[registryListOptions]{{name: "defaults"}, {name: "an argument", args: []string{"x"}, code: ExitUsage}}
		cases = append(cases, clientFlagCases(func(o *registryListOptions) *clientOptions { return &o.co })...)
		runFlagCases(t, newCmdRegistryList, nil, func() *registryListOptions { return &registryListOptions{co: defaultClient()} }, cases)
	})
	t.Run("lookup", func(t *testing.T) {
		cases := []flagCase[registryLookupOptions]{
			{name: "a hash", args: []string{testHash}, want: func(o *registryLookupOptions) { o.hash = testHash }},
			{name: "--model", args: []string{"--model", "m.onnx"}, want: func(o *registryLookupOptions) { o.model = "m.onnx" }},
			{name: "SVC_MODEL", env: map[string]string{"SVC_MODEL": "env.onnx"}, want: func(o *registryLookupOptions) { o.model = "env.onnx" }},
			{name: "neither", code: ExitUsage},
			{name: "both", args: []string{testHash, "--model", "m.onnx"}, code: ExitUsage},
			{name: "not a hash", args: []string{"sha256:ABC"}, code: ExitUsage},
			{name: "two hashes", args: []string{testHash, testHash}, code: ExitUsage},
		}
		for _, c := range clientFlagCases(func(o *registryLookupOptions) *clientOptions { return &o.co }) {
			want := c.want
			c.args = append(c.args, testHash)
			c.want = func(o *registryLookupOptions) {
				o.hash = testHash
				if want != nil {
					want(o)
				}
			}
			cases = append(cases, c)
		}
		runFlagCases(t, newCmdRegistryLookup, nil, func() *registryLookupOptions { return &registryLookupOptions{co: defaultClient()} }, cases)
	})
	t.Run("get", func(t *testing.T) {
		cases := []flagCase[registryGetOptions]{{name: "a hash"}}
		cases = append(cases, clientFlagCases(func(o *registryGetOptions) *clientOptions { return &o.co })...)
		runFlagCases(t, newCmdRegistryGet, []string{testHash}, func() *registryGetOptions { return &registryGetOptions{co: defaultClient(), hash: testHash} }, cases)
		for _, args := range [][]string{{"sha256:00"}, {}, {testHash, testHash}} {
			if got, err := parseFlags(t, newCmdRegistryGet, nil, args...); got != nil || exitCode(err) != ExitUsage {
				t.Errorf("svc registry get %q: exit %d (%v), want %d", args, exitCode(err), err, ExitUsage)
			}
		}
	})
}

func TestCalibrateRequestFlags(t *testing.T) {
	defaults := func() *calibrateRequestOptions { return &calibrateRequestOptions{co: defaultClient(), hash: testHash} }
	cases := []flagCase[calibrateRequestOptions]{
		{name: "--model-hash"},
		{name: "--hub-model-id --email --description", args: []string{"--hub-model-id", "acme/pii", "--email", "ml@acme.example", "--description", "a PII model"},
			want: func(o *calibrateRequestOptions) {
				o.hub, o.email, o.desc = "acme/pii", "ml@acme.example", "a PII model"
			}},
		{name: "--gpu-class list and repeated", args: []string{"--gpu-class", "cpu,a10g", "--gpu-class", "h100"},
			want: func(o *calibrateRequestOptions) { o.gpus = []string{"cpu", "a10g", "h100"} }},
		{name: "SVC_EMAIL", env: map[string]string{"SVC_EMAIL": "env@acme.example"}, want: func(o *calibrateRequestOptions) { o.email = "env@acme.example" }},
		{name: "--model as well", args: []string{"--model", "m.onnx"}, code: ExitUsage},
		{name: "an argument", args: []string{"m.onnx"}, code: ExitUsage},
	}
	cases = append(cases, clientFlagCases(func(o *calibrateRequestOptions) *clientOptions { return &o.co })...)
	runFlagCases(t, newCmdCalibrateRequest, []string{"--model-hash", testHash}, defaults, cases)
	for _, args := range [][]string{{}, {"--model-hash", "sha256:00"}} {
		if got, err := parseFlags(t, newCmdCalibrateRequest, nil, args...); got != nil || exitCode(err) != ExitUsage {
			t.Errorf("svc calibrate request %q: exit %d (%v), want %d", args, exitCode(err), err, ExitUsage)
		}
	}
	got, err := parseFlags(t, newCmdCalibrateRequest, nil, "--model", "m.onnx")
	if err != nil || got.model != "m.onnx" || got.hash != "" {
		t.Errorf("svc calibrate request --model: %+v %v", got, err)
	}
}
