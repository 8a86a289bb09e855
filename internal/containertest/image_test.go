package containertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/backup"
)

// podman runs podman with the storage driver the images were built with
// and the runtime flags this machine needs (SVC_PODMAN_FLAGS; by default
// cgroupfs, and runc where it is installed: crun refuses hybrid cgroups in
// some containers).
type podman struct {
	t     *testing.T
	flags []string
}

func newPodman(t *testing.T, driver string) *podman {
	flags := []string{"--storage-driver", driver}
	if f := os.Getenv("SVC_PODMAN_FLAGS"); f != "" {
		flags = append(flags, strings.Fields(f)...)
	} else {
		flags = append(flags, "--cgroup-manager", "cgroupfs")
		if _, err := exec.LookPath("runc"); err == nil {
			flags = append(flags, "--runtime", "runc")
		}
	}
	return &podman{t: t, flags: flags}
}

func (p *podman) cmd(args ...string) *exec.Cmd {
	return exec.Command("podman", append(append([]string(nil), p.flags...), args...)...)
}

func (p *podman) out(args ...string) string {
	p.t.Helper()
	var stderr bytes.Buffer
	c := p.cmd(args...)
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		p.t.Fatalf("podman %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// runFlags are the flags of every container run: the root filesystem
// read-only, no network (the health check runs inside the container), and
// resource limits lowered to what an unprivileged sandbox may set.
var runFlags = []string{"--read-only", "--network", "none", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096"}

// TestImagesBuildAndRun builds both images offline with
// scripts/build-images.sh (Buildah, the Dockerfiles goreleaser uses) and
// runs them with Podman: svc serves from a volume with a read-only root
// filesystem as uid 65532, its HEALTHCHECK passes (and fails when nothing
// listens), `svc admin backup --out -` run in the container gives a backup
// that restores, and svc-verify verifies a VPEC mounted read-only.
func TestImagesBuildAndRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds container images (not in -short)")
	}
	for _, tool := range []string{"buildah", "podman"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (apt-get install buildah podman): the image layout is checked by TestDockerfiles only", tool)
		}
	}
	driver := os.Getenv("SVC_STORAGE_DRIVER")
	if driver == "" {
		driver = "vfs" // works without overlay mounts
	}
	tag := fmt.Sprintf("test-%d", time.Now().UnixNano())
	build := exec.Command("bash", filepath.Join(repo, "scripts", "build-images.sh"), tag)
	build.Env = append(os.Environ(), "SVC_STORAGE_DRIVER="+driver)
	out, err := build.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("scripts/build-images.sh: %v\n%s%s", err, out, stderr)
	}
	images := strings.Fields(string(out))
	if len(images) != 2 {
		t.Fatalf("build-images.sh printed %q", out)
	}
	svcImage, verifyImage := images[0], images[1]
	p := newPodman(t, driver)
	t.Cleanup(func() { p.cmd("rmi", "-f", svcImage, verifyImage).Run() })

	// The configuration as built.
	var cfg []struct {
		Config struct {
			User       string
			Entrypoint []string
			Volumes    map[string]struct{}
			Labels     map[string]string
		}
		Healthcheck *struct{ Test []string }
	}
	if err := json.Unmarshal([]byte(p.out("image", "inspect", svcImage)), &cfg); err != nil || len(cfg) != 1 {
		t.Fatalf("image inspect: %v", err)
	}
	c := cfg[0].Config
	if hc := cfg[0].Healthcheck; hc == nil || !slices.Contains(hc.Test, "healthcheck") {
		t.Fatalf("svc image health check: %+v (Buildah keeps it only in the docker format: --format docker)", hc)
	}
	if c.User != "65532:65532" || !slices.Equal(c.Entrypoint, []string{"/usr/local/bin/svc"}) ||
		c.Labels["org.opencontainers.image.version"] != tag || c.Labels["org.opencontainers.image.source"] != "https://github.com/svc-gov/svc" {
		t.Fatalf("svc image configuration: %+v", c)
	}
	if _, ok := c.Volumes["/var/lib/svc"]; !ok {
		t.Fatalf("svc image volumes: %v", c.Volumes)
	}

	// svc serves from the volume, read-only root, as 65532.
	data := t.TempDir()
	if err := os.Chown(data, 65532, 65532); err != nil {
		t.Skipf("cannot give the volume to uid 65532 (not root?): %v", err)
	}
	name := "svc-" + tag
	run := append([]string{"run", "-d", "--name", name, "--health-interval", "disable", "-v", data + ":/var/lib/svc"}, runFlags...)
	p.out(append(run, svcImage)...)
	t.Cleanup(func() { p.cmd("rm", "-f", name).Run() })
	healthy := false
	for range 100 {
		if p.cmd("healthcheck", "run", name).Run() == nil {
			healthy = true
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !healthy {
		t.Fatalf("the HEALTHCHECK never passed:\n%s", p.out("logs", name))
	}
	pid := strings.TrimSpace(p.out("inspect", "-f", "{{.State.Pid}}", name))
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil || !strings.Contains(string(status), "\nUid:\t65532\t65532\t65532\t65532\n") {
		t.Fatalf("the service does not run as uid 65532: %v\n%s", err, status)
	}
	if _, err := os.Stat(filepath.Join(data, "signing-key.pem")); err != nil {
		t.Fatalf("the key material is not in the volume: %v", err)
	}
	// Administration through the same binary, and a backup to stdout.
	p.out("exec", name, "/usr/local/bin/svc", "admin", "org", "create", "acme")
	archive := p.out("exec", name, "/usr/local/bin/svc", "admin", "backup", "--out", "-")
	man, err := backup.Verify(context.Background(), strings.NewReader(archive), t.TempDir())
	if err != nil || man.Database == nil {
		t.Fatalf("the backup made in the container: %v", err)
	}
	t.Logf("svc image %s: healthy, uid 65532, read-only root; backup from the container: %d bytes, %d files", svcImage, len(archive), len(man.Files))

	// Nothing listening on 127.0.0.1:8080: the HEALTHCHECK fails.
	sick := "svc-sick-" + tag
	p.out(append(append([]string{"run", "-d", "--name", sick, "--health-interval", "disable", "-v", t.TempDir() + ":/var/lib/svc:U"}, runFlags...),
		svcImage, "serve", "--addr", "127.0.0.1:9999")...)
	t.Cleanup(func() { p.cmd("rm", "-f", sick).Run() })
	time.Sleep(2 * time.Second)
	if err := p.cmd("healthcheck", "run", sick).Run(); err == nil {
		t.Fatal("the HEALTHCHECK passed with nothing listening on its address")
	}

	// svc-verify verifies a VPEC mounted read-only.
	vectors, _ := filepath.Abs(filepath.Join(repo, "testdata", "vectors"))
	verify := p.out(append(append([]string{"run", "--rm", "-v", vectors + ":/work:ro"}, runFlags...),
		verifyImage, "verify", "vpec/valid/clean.json", "--trust-root", "keys/trust-bundle.pem")...)
	if !strings.Contains(verify, "VALID") {
		t.Fatalf("svc-verify in its image:\n%s", verify)
	}
}
