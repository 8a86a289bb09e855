package cli

import (
	"testing"

	"github.com/svc-gov/svc/pkg/zk/ceremony"
)

func TestZKCeremonyFlags(t *testing.T) {
	t.Run("init", func(t *testing.T) {
		p1 := func() *zkInitOptions {
			return &zkInitOptions{opts: ceremony.InitOptions{Dir: "p1", Phase: 1, Power: 14}, output: outputText}
		}
		runFlagCases(t, newCmdZKInit, []string{"--dir", "p1"}, p1, []flagCase[zkInitOptions]{
			{name: "phase 1 defaults"},
			{name: "--power -o json", args: []string{"--power", "10", "-o", "json"}, want: func(o *zkInitOptions) { o.opts.Power, o.output = 10, outputJSON }},
			{name: "SVC_POWER", env: map[string]string{"SVC_POWER": "5"}, want: func(o *zkInitOptions) { o.opts.Power = 5 }},
			{name: "phase 2 --model", args: []string{"--phase", "2", "--phase1", "base", "--model", "head.onnx"},
				want: func(o *zkInitOptions) { o.opts.Phase, o.opts.Phase1Dir, o.opts.Model = 2, "base", "head.onnx" }},
			{name: "phase 2 --quantized --onnx-model-hash", args: []string{"--phase", "2", "--phase1", "base", "--quantized", "h.json", "--onnx-model-hash", testHash},
				want: func(o *zkInitOptions) {
					o.opts.Phase, o.opts.Phase1Dir, o.opts.Quantized, o.opts.ONNXModelHash = 2, "base", "h.json", testHash
				}},
			{name: "phase 2 --r1cs --name", args: []string{"--phase", "2", "--phase1", "base", "--r1cs", "c.r1cs", "--name", "mine"},
				want: func(o *zkInitOptions) {
					o.opts.Phase, o.opts.Phase1Dir, o.opts.R1CSFile, o.opts.CircuitName = 2, "base", "c.r1cs", "mine"
				}},
			{name: "phase 2 --circuit", args: []string{"--phase", "2", "--phase1", "base", "--circuit", "demo"},
				want: func(o *zkInitOptions) { o.opts.Phase, o.opts.Phase1Dir, o.opts.Circuit = 2, "base", "demo" }},
			{name: "phase 1 with a circuit", args: []string{"--circuit", "demo"}, code: ExitUsage},
			{name: "phase 2 without --phase1", args: []string{"--phase", "2", "--circuit", "demo"}, code: ExitUsage},
			{name: "phase 2 without a circuit", args: []string{"--phase", "2", "--phase1", "base"}, code: ExitUsage},
			{name: "phase 2 with two circuits", args: []string{"--phase", "2", "--phase1", "base", "--circuit", "demo", "--model", "h.onnx"}, code: ExitUsage},
			{name: "phase 3", args: []string{"--phase", "3"}, code: ExitUsage},
			{name: "bad --output", args: []string{"-o", "yaml"}, code: ExitUsage},
		})
		if got, err := parseFlags(t, newCmdZKInit, nil, "--phase", "1"); got != nil || exitCode(err) != ExitUsage {
			t.Errorf("without --dir: exit %d (%v), want %d", exitCode(err), err, ExitUsage)
		}
	})
	t.Run("contribute", func(t *testing.T) {
		runFlagCases(t, newCmdZKContribute, []string{"--dir", "p1", "--name", "Example Org"}, func() *zkContributeOptions {
			return &zkContributeOptions{dir: "p1", name: "Example Org", output: outputText}
		}, []flagCase[zkContributeOptions]{
			{name: "defaults"},
			{name: "-o json", args: []string{"-o", "json"}, want: func(o *zkContributeOptions) { o.output = outputJSON }},
			{name: "an argument", args: []string{"p1"}, code: ExitUsage},
		})
		for _, args := range [][]string{{"--dir", "p1"}, {"--name", "n"}} {
			if got, err := parseFlags(t, newCmdZKContribute, nil, args...); got != nil || exitCode(err) != ExitUsage {
				t.Errorf("svc zk ceremony contribute %q: exit %d (%v), want %d", args, exitCode(err), err, ExitUsage)
			}
		}
		if got, err := parseFlags(t, newCmdZKContribute, map[string]string{"SVC_NAME": "Env Org"}, "--dir", "p1"); err != nil || got.name != "Env Org" {
			t.Errorf("SVC_NAME: %+v %v", got, err)
		}
	})
	t.Run("verify", func(t *testing.T) {
		runFlagCases(t, newCmdZKVerify, nil, func() *zkVerifyOptions { return &zkVerifyOptions{dir: "head", output: outputText} }, []flagCase[zkVerifyOptions]{
			{name: "--dir", args: []string{"--dir", "head"}},
			{name: "--dir --phase1", args: []string{"--dir", "head", "--phase1", "p1"}, want: func(o *zkVerifyOptions) { o.phase1 = "p1" }},
			{name: "offline", args: []string{"--transcript", "t.json", "--verifying-key", "v.key", "--expect-hash", testHash},
				want: func(o *zkVerifyOptions) { o.dir, o.doc, o.vk, o.expect = "", "t.json", "v.key", testHash }},
			{name: "SVC_DIR", env: map[string]string{"SVC_DIR": "head"}},
			{name: "nothing", code: ExitUsage},
			{name: "a transcript alone", args: []string{"--transcript", "t.json"}, code: ExitUsage},
			{name: "--dir and --transcript", args: []string{"--dir", "head", "--transcript", "t.json", "--verifying-key", "v.key"}, code: ExitUsage},
		})
	})
	t.Run("finalize", func(t *testing.T) {
		runFlagCases(t, newCmdZKFinalize, []string{"--dir", "p1", "--beacon", "8f2e"}, func() *zkFinalizeOptions {
			return &zkFinalizeOptions{dir: "p1", beacon: "8f2e", output: outputText}
		}, []flagCase[zkFinalizeOptions]{
			{name: "defaults"},
			{name: "--phase1 -o json", args: []string{"--phase1", "base", "-o", "json"}, want: func(o *zkFinalizeOptions) { o.phase1, o.output = "base", outputJSON }},
			{name: "SVC_PHASE1", env: map[string]string{"SVC_PHASE1": "envbase"}, want: func(o *zkFinalizeOptions) { o.phase1 = "envbase" }},
		})
		for _, args := range [][]string{{"--dir", "p1"}, {"--beacon", "8f2e"}} {
			if got, err := parseFlags(t, newCmdZKFinalize, nil, args...); got != nil || exitCode(err) != ExitUsage {
				t.Errorf("svc zk ceremony finalize %q: exit %d (%v), want %d", args, exitCode(err), err, ExitUsage)
			}
		}
	})
}
