package cli_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/app/cli"
)

// unit is a systemd unit file: section -> key -> values (in order).
type unit map[string]map[string][]string

func parseUnit(t *testing.T, path string) unit {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := unit{}
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: not KEY=VALUE in a section: %q", path, n, line)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	return u
}

// svcCommandLine finds the svc command in an ExecStart line and returns
// its words after the binary.
func svcCommandLine(t *testing.T, execStart string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(execStart, "/usr/local/bin/svc ")
	if !ok {
		t.Fatalf("ExecStart %q does not run /usr/local/bin/svc", execStart)
	}
	var words []string
	for _, w := range strings.Fields(rest) {
		words = append(words, strings.Trim(w, `'"`))
	}
	return words
}

// checkFlags fails when the svc command line names a command or a flag
// svc does not have (a unit left behind by a change of the CLI).
func checkFlags(t *testing.T, name string, words []string) {
	t.Helper()
	cmd := cli.NewSvcCommand(quietStreams())
	i := 0
	for ; i < len(words) && !strings.HasPrefix(words[i], "-"); i++ {
		next, _, err := cmd.Find([]string{words[i]})
		if err != nil || next == cmd {
			t.Fatalf("%s: svc has no command %q under %q", name, words[i], cmd.CommandPath())
		}
		cmd = next
	}
	for ; i < len(words); i++ {
		if !strings.HasPrefix(words[i], "--") {
			continue
		}
		flag, _, _ := strings.Cut(strings.TrimPrefix(words[i], "--"), "=")
		if cmd.Flags().Lookup(flag) == nil && cmd.InheritedFlags().Lookup(flag) == nil {
			t.Errorf("%s: %s has no flag --%s", name, cmd.CommandPath(), flag)
		}
	}
}

// TestSystemdUnits checks the units of examples/ops that docs/OPERATIONS.md
// installs: the service runs as its own user with a private state
// directory and a hardened sandbox, stops gracefully, and its command
// lines use commands and flags svc has. Where systemd-analyze is
// installed, `systemd-analyze verify` must accept them without a warning.
func TestSystemdUnits(t *testing.T) {
	dir := filepath.Join(docsRoot, "examples", "ops")
	svc := parseUnit(t, filepath.Join(dir, "svc.service"))
	s := svc["Service"]
	for k, want := range map[string]string{
		"User": "svc", "Group": "svc", "StateDirectory": "svc", "StateDirectoryMode": "0700", "UMask": "0077",
		"Environment": "SVC_DATA_DIR=/var/lib/svc", "KillSignal": "SIGTERM", "NoNewPrivileges": "yes",
		"ProtectSystem": "strict", "CapabilityBoundingSet": "", "Restart": "on-failure",
	} {
		if got := s[k]; len(got) != 1 || got[0] != want {
			t.Errorf("svc.service: %s=%v, want %q", k, got, want)
		}
	}
	if got := s["EnvironmentFile"]; len(got) != 1 || !strings.HasPrefix(got[0], "-/etc/svc/") {
		t.Errorf("svc.service: EnvironmentFile=%v: the DSN and its password come from a root-only file", got)
	}
	words := svcCommandLine(t, s["ExecStart"][0])
	if len(words) == 0 || words[0] != "serve" {
		t.Fatalf("svc.service runs svc %v, want svc serve", words)
	}
	checkFlags(t, "svc.service", words)
	backup := parseUnit(t, filepath.Join(dir, "svc-backup.service"))
	bw := svcCommandLine(t, backup["Service"]["ExecStart"][0])
	if strings.Join(bw[:2], " ") != "admin backup" {
		t.Fatalf("svc-backup.service runs svc %v", bw)
	}
	checkFlags(t, "svc-backup.service", bw)
	if backup["Service"]["User"][0] != "svc" || backup["Service"]["Type"][0] != "oneshot" {
		t.Errorf("svc-backup.service: %v", backup["Service"])
	}
	timer := parseUnit(t, filepath.Join(dir, "svc-backup.timer"))
	if len(timer["Timer"]["OnCalendar"]) != 1 || timer["Timer"]["Persistent"][0] != "yes" {
		t.Errorf("svc-backup.timer: %v", timer["Timer"])
	}

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze not installed: the units were parsed, not verified by systemd")
		return
	}
	bin, err := exec.LookPath("svc")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	var names []string
	for _, name := range []string{"svc.service", "svc-backup.service", "svc-backup.timer"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		// verify checks that ExecStart's binary exists: this test's svc.
		b = []byte(strings.ReplaceAll(string(b), "/usr/local/bin/svc", bin))
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, "./"+name)
	}
	cmd := exec.Command(analyze, append([]string{"verify", "--man=no"}, names...)...)
	cmd.Dir = tmp
	out, err := cmd.CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}
