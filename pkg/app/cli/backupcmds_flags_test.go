package cli

import (
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/server/setup"
)

func TestAdminBackupFlags(t *testing.T) {
	defaults := func() *backupOptions {
		return &backupOptions{out: "b.tar.gz", output: outputText}
	}
	cases := []flagCase[backupOptions]{
		{name: "defaults"},
		{name: "--keys-only", args: []string{"--keys-only"}, want: func(o *backupOptions) { o.keysOnly = true }},
		{name: "--out - to a pipe", args: []string{"--out", "-"}, want: func(o *backupOptions) { o.out = "-" }},
		{name: "--data-dir", args: []string{"--data-dir", "/var/lib/svc"}, want: func(o *backupOptions) { o.data.dataDir = "/var/lib/svc" }},
		{name: "SVC_DATA_DIR", env: map[string]string{"SVC_DATA_DIR": "/env/svc"}, want: func(o *backupOptions) { o.data.dataDir = "/env/svc" }},
		{name: "--database with --keys-only", args: []string{"--database", "postgres://db/svc", "--keys-only"},
			want: func(o *backupOptions) { o.data.database, o.keysOnly = "postgres://db/svc", true }},
		{name: "--database without --keys-only", args: []string{"--database", "postgres://db/svc"}, code: ExitUsage},
		{name: "SVC_DATABASE without --keys-only", env: map[string]string{"SVC_DATABASE": "postgres://env/svc"}, code: ExitUsage},
		{name: "an argument", args: []string{"extra"}, code: ExitUsage},
	}
	cases = append(cases, outputFlagCases(func(o *backupOptions) *string { return &o.output })...)
	runFlagCases(t, newCmdAdminBackup, []string{"--out", "b.tar.gz"}, defaults, cases)
	if got, err := parseFlags(t, newCmdAdminBackup, nil); got != nil || exitCode(err) != ExitUsage {
		t.Errorf("without --out: ran %+v, exit %d (%v), want %d", got, exitCode(err), err, ExitUsage)
	}
}

func TestAdminRestoreFlags(t *testing.T) {
	defaults := func() *restoreOptions {
		return &restoreOptions{from: "b.tar.gz", output: outputText}
	}
	cases := []flagCase[restoreOptions]{
		{name: "defaults"},
		{name: "--check", args: []string{"--check"}, want: func(o *restoreOptions) { o.check = true }},
		{name: "--from - (standard input)", args: []string{"--from", "-"}, want: func(o *restoreOptions) { o.from = "-" }},
		{name: "an argument", args: []string{"extra"}, code: ExitUsage},
	}
	cases = append(cases, dataFlagCases(func(o *restoreOptions) *dataOptions { return &o.data })...)
	cases = append(cases, outputFlagCases(func(o *restoreOptions) *string { return &o.output })...)
	runFlagCases(t, newCmdAdminRestore, []string{"--from", "b.tar.gz"}, defaults, cases)
	if got, err := parseFlags(t, newCmdAdminRestore, nil); got != nil || exitCode(err) != ExitUsage {
		t.Errorf("without --from: ran %+v, exit %d (%v), want %d", got, exitCode(err), err, ExitUsage)
	}
}

func TestHealthcheckFlags(t *testing.T) {
	defaults := func() *healthcheckOptions {
		return &healthcheckOptions{url: setup.DefaultProbeURL, timeout: 5 * time.Second}
	}
	cases := []flagCase[healthcheckOptions]{
		{name: "defaults"},
		{name: "--url --timeout", args: []string{"--url", "http://127.0.0.1:9/readyz", "--timeout", "2s"},
			want: func(o *healthcheckOptions) { o.url, o.timeout = "http://127.0.0.1:9/readyz", 2*time.Second }},
		{name: "zero --timeout", args: []string{"--timeout", "0s"}, code: ExitUsage},
		{name: "bad --timeout", args: []string{"--timeout", "soon"}, code: ExitUsage},
		{name: "an argument", args: []string{"extra"}, code: ExitUsage},
	}
	runFlagCases(t, newCmdHealthcheck, nil, defaults, cases)
}
