package containertest

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

const repo = "../.."

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	Cmd  string // upper case: FROM, COPY, USER, ...
	Args string
}

func parseDockerfile(t *testing.T, name string) []instruction {
	t.Helper()
	f, err := os.Open(filepath.Join(repo, "container", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []instruction
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if strings.HasSuffix(line, `\`) {
			cur.WriteString(strings.TrimSuffix(line, `\`) + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{Cmd: strings.ToUpper(cmd), Args: strings.TrimSpace(args)})
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// after returns the instructions of the final stage (after the last FROM).
func finalStage(ins []instruction) []instruction {
	last := 0
	for i, in := range ins {
		if in.Cmd == "FROM" {
			last = i
		}
	}
	return ins[last:]
}

func args(ins []instruction, cmd string) []string {
	var out []string
	for _, in := range ins {
		if in.Cmd == cmd {
			out = append(out, in.Args)
		}
	}
	return out
}

// execForm decodes a JSON-array (exec form) argument.
func execForm(t *testing.T, what, s string) []string {
	t.Helper()
	var v []string
	if err := json.Unmarshal([]byte(s), &v); err != nil || len(v) == 0 {
		t.Fatalf("%s %s: want the exec form [\"/path\", ...] (no shell in the image): %v", what, s, err)
	}
	return v
}

// TestDockerfiles checks what the images promise: a non-root user, a
// data directory that is a volume (so the root filesystem can be
// read-only), an absolute exec-form entrypoint that is the copied release
// binary, a HEALTHCHECK that probes /healthz with the binary itself (svc),
// and the OCI labels with version and source filled from build arguments.
func TestDockerfiles(t *testing.T) {
	for _, tc := range []struct {
		file, binary, from string
		volume, health     bool
	}{
		{"svc.Dockerfile", "svc", "${BASE}", true, true},
		{"svc-verify.Dockerfile", "svc-verify", "scratch", false, false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			ins := finalStage(parseDockerfile(t, tc.file))
			if got := ins[0].Args; got != tc.from {
				t.Errorf("FROM %s, want %s", got, tc.from)
			}
			if copies := args(ins, "COPY"); len(copies) != 1 || copies[0] != "${TARGETPLATFORM}/"+tc.binary+" /usr/local/bin/"+tc.binary {
				t.Errorf("COPY %v: want the release binary from goreleaser's context, ${TARGETPLATFORM}/%s", copies, tc.binary)
			}
			if len(args(ins, "RUN")) > 0 {
				t.Errorf("RUN %v: the base has no shell, and nothing is built in the image", args(ins, "RUN"))
			}
			users := args(ins, "USER")
			if len(users) != 1 || users[0] != "65532:65532" {
				t.Errorf("USER %v: want the non-root 65532:65532", users)
			}
			// The user is set before the entrypoint and never switched back.
			entry := execForm(t, "ENTRYPOINT", strings.Join(args(ins, "ENTRYPOINT"), ""))
			if entry[0] != "/usr/local/bin/"+tc.binary {
				t.Errorf("ENTRYPOINT %v", entry)
			}
			vols := args(ins, "VOLUME")
			if tc.volume {
				if len(vols) != 1 || !slices.Equal(execForm(t, "VOLUME", vols[0]), []string{"/var/lib/svc"}) {
					t.Errorf("VOLUME %v: want [\"/var/lib/svc\"], the data directory", vols)
				}
				if wd := args(ins, "WORKDIR"); len(wd) != 1 || wd[0] != "/var/lib/svc" {
					t.Errorf("WORKDIR %v: want /var/lib/svc, created after USER so the user owns it", wd)
				}
				if !slices.Contains(args(ins, "ENV"), "SVC_DATA_DIR=/var/lib/svc") {
					t.Errorf("ENV %v: want SVC_DATA_DIR=/var/lib/svc", args(ins, "ENV"))
				}
				if cmd := execForm(t, "CMD", strings.Join(args(ins, "CMD"), "")); !slices.Equal(cmd[:3], []string{"serve", "--addr", "0.0.0.0:8080"}) {
					t.Errorf("CMD %v: want serve --addr 0.0.0.0:8080", cmd)
				}
			} else if len(vols) != 0 {
				t.Errorf("VOLUME %v: svc-verify keeps no state", vols)
			}
			hc := args(ins, "HEALTHCHECK")
			switch {
			case !tc.health && (len(hc) != 1 || hc[0] != "NONE"):
				t.Errorf("HEALTHCHECK %v: want NONE for a one-shot command", hc)
			case tc.health:
				if len(hc) != 1 || !strings.Contains(hc[0], " CMD [") {
					t.Fatalf("HEALTHCHECK %v: want one, in exec form", hc)
				}
				_, form, _ := strings.Cut(hc[0], " CMD ")
				probe := execForm(t, "HEALTHCHECK CMD", form)
				if !slices.Equal(probe[:4], []string{"/usr/local/bin/svc", "healthcheck", "--url", "http://127.0.0.1:8080/healthz"}) {
					t.Errorf("HEALTHCHECK CMD %v: want svc healthcheck --url http://127.0.0.1:8080/healthz", probe)
				}
				for _, opt := range []string{"--interval=", "--timeout=", "--retries="} {
					if !strings.Contains(hc[0], opt) {
						t.Errorf("HEALTHCHECK without %s", opt)
					}
				}
			}
			labels := strings.Join(args(ins, "LABEL"), " ")
			for _, want := range []string{
				`org.opencontainers.image.version="${VERSION}"`, `org.opencontainers.image.source="${SOURCE}"`,
				`org.opencontainers.image.revision="${REVISION}"`, `org.opencontainers.image.created="${CREATED}"`,
				`org.opencontainers.image.title="` + tc.binary + `"`, `org.opencontainers.image.licenses="Apache-2.0"`,
			} {
				if !strings.Contains(labels, want) {
					t.Errorf("LABEL lacks %s", want)
				}
			}
			for _, a := range []string{"TARGETPLATFORM", "VERSION", "REVISION", "CREATED", "SOURCE"} {
				if !slices.ContainsFunc(args(ins, "ARG"), func(s string) bool { return s == a || strings.HasPrefix(s, a+"=") }) {
					t.Errorf("no ARG %s", a)
				}
			}
		})
	}
}

// goreleaser is the part of .goreleaser.yaml the images use.
type goreleaser struct {
	Builds []struct {
		ID     string   `yaml:"id"`
		Binary string   `yaml:"binary"`
		Env    []string `yaml:"env"`
		Goos   []string `yaml:"goos"`
		Goarch []string `yaml:"goarch"`
	} `yaml:"builds"`
	Dockers []struct {
		ID         string            `yaml:"id"`
		IDs        []string          `yaml:"ids"`
		Dockerfile string            `yaml:"dockerfile"`
		Images     []string          `yaml:"images"`
		Tags       []string          `yaml:"tags"`
		Platforms  []string          `yaml:"platforms"`
		BuildArgs  map[string]string `yaml:"build_args"`
	} `yaml:"dockers_v2"`
}

// TestGoreleaserImages: .goreleaser.yaml builds both images from the
// release binaries (the builds it names exist, for every platform it
// builds the image for), with the Dockerfiles above and the build
// arguments their labels use. `make release-check` (goreleaser check)
// validates the rest of the schema.
func TestGoreleaserImages(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repo, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var g goreleaser
	if err := yaml.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		build, dockerfile string
		cgo               bool
	}{
		"svc":        {"svc", "container/svc.Dockerfile", true},
		"svc-verify": {"svc-verify", "container/svc-verify.Dockerfile", false},
	}
	if len(g.Dockers) != len(want) {
		t.Fatalf("%d dockers_v2 entries, want %d", len(g.Dockers), len(want))
	}
	for _, d := range g.Dockers {
		w, ok := want[d.ID]
		if !ok {
			t.Errorf("unexpected image %s", d.ID)
			continue
		}
		if !slices.Equal(d.IDs, []string{w.build}) || d.Dockerfile != w.dockerfile {
			t.Errorf("%s: ids %v, dockerfile %s; want [%s], %s", d.ID, d.IDs, d.Dockerfile, w.build, w.dockerfile)
		}
		if _, err := os.Stat(filepath.Join(repo, d.Dockerfile)); err != nil {
			t.Error(err)
		}
		if len(d.Images) == 0 || !strings.HasSuffix(d.Images[0], "/"+d.ID) || len(d.Tags) == 0 || d.Tags[0] != "{{ .Version }}" {
			t.Errorf("%s: images %v tags %v", d.ID, d.Images, d.Tags)
		}
		for arg, v := range map[string]string{"VERSION": "{{ .Version }}", "REVISION": "{{ .FullCommit }}", "CREATED": "{{ .CommitDate }}", "SOURCE": "https://github.com/svc-gov/svc"} {
			if d.BuildArgs[arg] != v {
				t.Errorf("%s: build_args.%s = %q, want %q", d.ID, arg, d.BuildArgs[arg], v)
			}
		}
		// Each platform of the image is one the build makes.
		for _, b := range g.Builds {
			if b.ID != w.build {
				continue
			}
			if got := slices.Contains(b.Env, "CGO_ENABLED=1"); got != w.cgo {
				t.Errorf("build %s: cgo %v, want %v", b.ID, got, w.cgo)
			}
			for _, p := range d.Platforms {
				os, arch, _ := strings.Cut(p, "/")
				if !slices.Contains(b.Goos, os) || !slices.Contains(b.Goarch, arch) {
					t.Errorf("%s: platform %s is not built by %s (%v %v)", d.ID, p, b.ID, b.Goos, b.Goarch)
				}
			}
		}
	}
}
