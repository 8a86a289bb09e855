package cli

import (
	"reflect"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/ml/calibration"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

func TestCalibrateRunFlags(t *testing.T) {
	defaults := func() *calibrateRunOptions {
		return &calibrateRunOptions{models: []string{"m"}, out: "p.json", gpuClass: "cpu", passes: calibration.DefaultPasses,
			margin: calibration.DefaultSafetyMargin, seed: 1, modelClass: "classifier", output: outputText}
	}
	runFlagCases(t, newCmdCalibrateRun, []string{"--model", "m", "--out", "p.json"}, defaults, []flagCase[calibrateRunOptions]{
		{name: "defaults"},
		{name: "--model repeated, --hub-model-id", args: []string{"--model", "n", "--hub-model-id", "a/m", "--hub-model-id", "a/n"},
			want: func(o *calibrateRunOptions) { o.models, o.hubIDs = []string{"m", "n"}, []string{"a/m", "a/n"} }},
		{name: "--gpu-class --passes --safety-margin --seed --threads", args: []string{"--gpu-class", "a10g", "--passes", "10", "--safety-margin", "2.5", "--seed", "7", "--threads", "2"},
			want: func(o *calibrateRunOptions) {
				o.gpuClass, o.passes, o.margin, o.seed, o.threads = "a10g", 10, 2.5, 7, 2
			}},
		{name: "--corpus --force --measurements-out", args: []string{"--corpus", "c.txt", "--force", "--measurements-out", "meas.json"},
			want: func(o *calibrateRunOptions) { o.corpus, o.force, o.measOut = "c.txt", true, "meas.json" }},
		{name: "--profile-id --model-class --architecture", args: []string{"--profile-id", "acme/pii-class/v1.2.3", "--model-class", "pii", "--architecture", "distilbert"},
			want: func(o *calibrateRunOptions) {
				o.profileID, o.modelClass, o.architecture = "acme/pii-class/v1.2.3", "pii", "distilbert"
			}},
		{name: "--ort-lib -o json", args: []string{"--ort-lib", "libort.so", "-o", "json"}, want: func(o *calibrateRunOptions) { o.mo.ortLib, o.output = "libort.so", outputJSON }},
		{name: "SVC_PASSES and SVC_ORT_LIB", env: map[string]string{"SVC_PASSES": "20", "SVC_ORT_LIB": "env.so"}, want: func(o *calibrateRunOptions) { o.passes, o.mo.ortLib = 20, "env.so" }},
		{name: "--passes 0", args: []string{"--passes", "0"}, code: ExitUsage},
		{name: "--workers 1", args: []string{"--workers", "1"}, want: func(o *calibrateRunOptions) { o.workers, o.workersSet = 1, true }},
		{name: "--workers 256", args: []string{"--workers", "256"}, want: func(o *calibrateRunOptions) { o.workers, o.workersSet = 256, true }},
		{name: "--workers 0", args: []string{"--workers", "0"}, code: ExitUsage},
		{name: "--workers -1", args: []string{"--workers", "-1"}, code: ExitUsage},
		{name: "--workers 257", args: []string{"--workers", "257"}, code: ExitUsage},
		{name: "bad --workers", args: []string{"--workers", "x"}, code: ExitUsage},
		{name: "bad --profile-id", args: []string{"--profile-id", "Acme/PII"}, code: ExitUsage},
		{name: "bad --seed", args: []string{"--seed", "-1"}, code: ExitUsage},
		{name: "bad --output", args: []string{"--output", "yaml"}, code: ExitUsage},
		{name: "an argument", args: []string{"m"}, code: ExitUsage},
	})
	// The refusal names the flag, not the library's option.
	for _, n := range []string{"0", "-1", "257"} {
		_, err := parseFlags(t, newCmdCalibrateRun, nil, "--model", "m", "--out", "p.json", "--workers", n)
		if err == nil || !strings.Contains(err.Error(), "--workers "+n) {
			t.Errorf("--workers %s: %v, want an error naming --workers", n, err)
		}
	}
	for _, args := range [][]string{{"--out", "p.json"}, {"--model", "m"}} {
		if got, err := parseFlags(t, newCmdCalibrateRun, nil, args...); got != nil || exitCode(err) != ExitUsage {
			t.Errorf("svc calibrate run %q: exit %d (%v), want %d", args, exitCode(err), err, ExitUsage)
		}
	}
}

func TestCalibrateMergeFlags(t *testing.T) {
	defaults := func() *calibrateMergeOptions {
		return &calibrateMergeOptions{files: []string{"a.json", "b.json"}, out: "p.json", margin: calibration.DefaultSafetyMargin,
			modelClass: "classifier", architecture: "bert-like", output: outputText}
	}
	runFlagCases(t, newCmdCalibrateMerge, []string{"a.json", "b.json", "--out", "p.json"}, defaults, []flagCase[calibrateMergeOptions]{
		{name: "defaults"},
		{name: "every flag", args: []string{"--force", "--safety-margin", "3", "--profile-id", "acme/pii-class/v2.0.0", "--model-class", "pii", "--architecture", "distilbert", "--hub-model-id", "a/m", "-o", "json"},
			want: func(o *calibrateMergeOptions) {
				o.force, o.margin, o.profileID, o.modelClass, o.architecture, o.hubIDs, o.output = true, 3, "acme/pii-class/v2.0.0", "pii", "distilbert", []string{"a/m"}, outputJSON
			}},
		{name: "SVC_MODEL_CLASS", env: map[string]string{"SVC_MODEL_CLASS": "toxicity"}, want: func(o *calibrateMergeOptions) { o.modelClass = "toxicity" }},
		{name: "bad --profile-id", args: []string{"--profile-id", "pii"}, code: ExitUsage},
		{name: "bad --safety-margin", args: []string{"--safety-margin", "x"}, code: ExitUsage},
	})
	for _, args := range [][]string{{"a.json"}, {"--out", "p.json"}} {
		if got, err := parseFlags(t, newCmdCalibrateMerge, nil, args...); got != nil || exitCode(err) != ExitUsage {
			t.Errorf("svc calibrate merge %q: exit %d (%v), want %d", args, exitCode(err), err, ExitUsage)
		}
	}
}

func TestModelGenerateFlags(t *testing.T) {
	defaults := func() *modelGenerateOptions {
		return &modelGenerateOptions{out: "m", cfg: modelgen.Config{Style: modelgen.StyleBERT}, output: outputText}
	}
	runFlagCases(t, newCmdModelGenerate, []string{"--out", "m"}, defaults, []flagCase[modelGenerateOptions]{
		{name: "defaults"},
		{name: "bert sizes", args: []string{"--layers", "4", "--hidden", "256", "--heads", "4", "--seq", "128", "--classes", "3", "--seed", "9"},
			want: func(o *modelGenerateOptions) {
				o.cfg.Layers, o.cfg.Hidden, o.cfg.Heads, o.cfg.SeqLen, o.cfg.Classes, o.cfg.Seed = 4, 256, 4, 128, 3, 9
			}},
		{name: "--style torch", args: []string{"--style", "torch"}, want: func(o *modelGenerateOptions) { o.cfg.Style = modelgen.StyleTorch }},
		{name: "--style mlp-head --dims", args: []string{"--style", "mlp-head", "--dims", "16,8,2"},
			want: func(o *modelGenerateOptions) { o.cfg.Style, o.dims = modelgen.StyleMLPHead, "16,8,2" }},
		{name: "SVC_STYLE and SVC_SEED", env: map[string]string{"SVC_STYLE": "torch", "SVC_SEED": "3"},
			want: func(o *modelGenerateOptions) { o.cfg.Style, o.cfg.Seed = modelgen.StyleTorch, 3 }},
		{name: "-o json", args: []string{"-o", "json"}, want: func(o *modelGenerateOptions) { o.output = outputJSON }},
		{name: "unknown --style", args: []string{"--style", "gpt"}, code: ExitUsage},
		{name: "--dims without mlp-head", args: []string{"--dims", "16,8,2"}, code: ExitUsage},
		{name: "bad --dims", args: []string{"--style", "mlp-head", "--dims", "16,x"}, code: ExitUsage},
		{name: "bad --layers", args: []string{"--layers", "two"}, code: ExitUsage},
		{name: "bad --output", args: []string{"-o", "yaml"}, code: ExitUsage},
		{name: "an argument", args: []string{"m"}, code: ExitUsage},
	})
	if got, err := parseFlags(t, newCmdModelGenerate, nil); got != nil || exitCode(err) != ExitUsage {
		t.Errorf("without --out: exit %d (%v), want %d", exitCode(err), err, ExitUsage)
	}
}

func TestTraceFlags(t *testing.T) {
	defaults := func() *traceOptions {
		return &traceOptions{model: "m", input: "hello", mode: trace.Production, output: outputText}
	}
	runFlagCases(t, newCmdTrace, []string{"--model", "m"}, func() *traceOptions { o := defaults(); o.input = ""; o.inputFile = "in.txt"; return o }, []flagCase[traceOptions]{
		{name: "--input-file", args: []string{"--input-file", "in.txt"}},
		{name: "--mode --out --ort-lib -o json", args: []string{"--input-file", "in.txt", "--mode", "residual", "--out", "t.json", "--ort-lib", "l.so", "-o", "json"},
			want: func(o *traceOptions) {
				o.mode, o.out, o.mo.ortLib, o.output = trace.Residual, "t.json", "l.so", outputJSON
			}},
		{name: "SVC_INPUT_FILE and SVC_MODE", env: map[string]string{"SVC_INPUT_FILE": "in.txt", "SVC_MODE": "full"},
			want: func(o *traceOptions) { o.mode = trace.Full }},
		{name: "--input and --input-file", args: []string{"--input-file", "in.txt", "--input", "x"}, code: ExitUsage},
		{name: "no input", code: ExitUsage},
		{name: "unknown --mode", args: []string{"--input-file", "in.txt", "--mode", "fast"}, code: ExitUsage},
		{name: "bad --output", args: []string{"--input-file", "in.txt", "-o", "yaml"}, code: ExitUsage},
	})
	if got, err := parseFlags(t, newCmdTrace, nil, "--input", "hello"); got != nil || exitCode(err) != ExitUsage {
		t.Errorf("without --model: exit %d (%v), want %d", exitCode(err), err, ExitUsage)
	}
	if got, err := parseFlags(t, newCmdTrace, nil, "--model", "m", "--input", "hello"); err != nil || !reflect.DeepEqual(got, defaults()) {
		t.Errorf("--input: %+v %v", got, err)
	}
}

// svc verify: the replay audit's flags; the verifier's own are
// pkg/app/cli/verifycmd's TestVerifyFlags.
func TestVerifyAuditFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want verifyOptions
		code int
	}{
		{name: "no audit", args: []string{"vpec.json", "--trust-root", "tb.pem"}},
		{name: "--trace --model --input-file --ort-lib", args: []string{"vpec.json", "--trace", "t.json", "--model", "m", "--input-file", "in.txt", "--ort-lib", "l.so"},
			want: verifyOptions{traceFile: "t.json", model: "m", inputFile: "in.txt", mo: modelOptions{ortLib: "l.so"}}},
		{name: "SVC_MODEL and SVC_INPUT_FILE", args: []string{"vpec.json", "--trace", "t.json"}, env: map[string]string{"SVC_MODEL": "m", "SVC_INPUT_FILE": "in.txt"},
			want: verifyOptions{traceFile: "t.json", model: "m", inputFile: "in.txt"}},
		{name: "--trace without --model", args: []string{"vpec.json", "--trace", "t.json", "--input-file", "in.txt"}, code: ExitUsage},
		{name: "--trace without --input-file", args: []string{"vpec.json", "--trace", "t.json", "--model", "m"}, code: ExitUsage},
		{name: "the verifier's flags still checked", args: []string{"vpec.json", "-o", "yaml"}, code: ExitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseFlags(t, newCmdVerify, tc.env, tc.args...)
			if c := exitCode(err); c != tc.code || (c != 0) != (got == nil) {
				t.Fatalf("exit %d (%v), options %+v; want exit %d", c, err, got, tc.code)
			}
			if got == nil {
				return
			}
			if got.verifier == nil {
				t.Fatal("the verifier's options were not passed on")
			}
			got.verifier = nil
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("options\n got %+v\nwant %+v", *got, tc.want)
			}
		})
	}
}
