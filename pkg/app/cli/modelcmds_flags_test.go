package cli

import (
	"testing"

	"github.com/svc-gov/svc/pkg/ml/calibration"
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
		{name: "bad --profile-id", args: []string{"--profile-id", "Acme/PII"}, code: ExitUsage},
		{name: "bad --seed", args: []string{"--seed", "-1"}, code: ExitUsage},
		{name: "bad --output", args: []string{"--output", "yaml"}, code: ExitUsage},
		{name: "an argument", args: []string{"m"}, code: ExitUsage},
	})
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
