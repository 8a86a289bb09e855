package cli

import "testing"

func TestKeysFlags(t *testing.T) {
	const uri = "pkcs11:token=t;object=k"
	t.Run("generate", func(t *testing.T) {
		cases := []flagCase[keysGenerateOptions]{
			{name: "--uri", args: []string{"--uri", uri}, want: func(o *keysGenerateOptions) { o.uri = uri }},
			{name: "--algorithm ecdsa", args: []string{"--uri", uri, "--algorithm", "ecdsa-p256-sha256"}, want: func(o *keysGenerateOptions) { o.uri, o.algorithm = uri, "ecdsa-p256-sha256" }},
			{name: "SVC_PKCS11_MODULE", args: []string{"--uri", uri}, env: map[string]string{"SVC_PKCS11_MODULE": "/m.so"}, want: func(o *keysGenerateOptions) { o.uri, o.pkcs11Module = uri, "/m.so" }},
			{name: "no --uri", code: ExitUsage},
			{name: "bad --algorithm", args: []string{"--uri", uri, "--algorithm", "rsa"}, code: ExitUsage},
			{name: "no PIN flag", args: []string{"--uri", uri, "--pin", "1234"}, code: ExitUsage},
		}
		runFlagCases(t, newCmdKeysGenerate, nil, func() *keysGenerateOptions {
			return &keysGenerateOptions{algorithm: "ed25519", output: outputText}
		}, cases)
	})
	t.Run("rotate", func(t *testing.T) {
		base := []string{"--purpose", "vpec-signing", "--new-key", uri}
		cases := []flagCase[keysRotateOptions]{
			{name: "required only"},
			{name: "--at --old --root-key --data-dir", args: []string{"--at", "2027-01-01T00:00:00Z", "--old", "0123456789abcdef", "--root-key", "file:///r.pem", "--data-dir", "d"},
				want: func(o *keysRotateOptions) {
					o.at, o.old, o.root.uri, o.data.dataDir = "2027-01-01T00:00:00Z", "0123456789abcdef", "file:///r.pem", "d"
				}},
			{name: "SVC_ROOT_KEY", env: map[string]string{"SVC_ROOT_KEY": "file:///env.pem"}, want: func(o *keysRotateOptions) { o.root.uri = "file:///env.pem" }},
			{name: "bad --at", args: []string{"--at", "tomorrow"}, code: ExitUsage},
		}
		runFlagCases(t, newCmdKeysRotate, base, func() *keysRotateOptions {
			return &keysRotateOptions{purpose: "vpec-signing", newKey: uri}
		}, cases)
		runFlagCases(t, newCmdKeysRotate, nil, func() *keysRotateOptions { return &keysRotateOptions{} },
			[]flagCase[keysRotateOptions]{{name: "no --purpose", args: []string{"--new-key", uri}, code: ExitUsage}})
	})
	t.Run("compromise", func(t *testing.T) {
		cases := []flagCase[keysCompromiseOptions]{
			{name: "KEYID --at", args: []string{"0123456789abcdef", "--at", "2026-08-01T12:00:00Z"},
				want: func(o *keysCompromiseOptions) { o.keyID, o.at = "0123456789abcdef", "2026-08-01T12:00:00Z" }},
			{name: "no --at", args: []string{"0123456789abcdef"}, code: ExitUsage},
			{name: "no KEYID", args: []string{"--at", "2026-08-01T12:00:00Z"}, code: ExitUsage},
		}
		runFlagCases(t, newCmdKeysCompromise, nil, func() *keysCompromiseOptions { return &keysCompromiseOptions{} }, cases)
	})
	t.Run("convert", func(t *testing.T) {
		cases := []flagCase[keysConvertOptions]{
			{name: "--bundle --from", args: []string{"--bundle", "b.pem", "--from", "2026-01-01T00:00:00Z"},
				want: func(o *keysConvertOptions) { o.bundle, o.from = "b.pem", "2026-01-01T00:00:00Z" }},
			{name: "no --from", args: []string{"--bundle", "b.pem"}, code: ExitUsage},
		}
		runFlagCases(t, newCmdKeysConvert, nil, func() *keysConvertOptions { return &keysConvertOptions{} }, cases)
	})
}
