package verify_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/testvectors"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/verify"
)

// memoryShapes builds documents of about size bytes: top-level shapes the
// shape check refuses at once, and VPECs whose records carry the densest
// details the rules allow (the worst case for the parse tree).
var memoryShapes = []struct {
	name string
	make func(tb testing.TB, size int) []byte
}{
	{"zeros array", func(_ testing.TB, size int) []byte { return []byte("[" + strings.Repeat("0,", size/2-1) + "0]") }},
	{"deep nesting", func(_ testing.TB, size int) []byte {
		return []byte(strings.Repeat("[", size/2) + strings.Repeat("]", size/2))
	}},
	{"small strings", func(_ testing.TB, size int) []byte { return []byte("[" + strings.Repeat(`"a",`, size/4-1) + `"a"]`) }},
	{"VPEC, real records", realVPEC},
	{"VPEC, details of zeros", func(tb testing.TB, size int) []byte {
		return detailsVPEC(tb, size, `{"z":[`+strings.Repeat("0,", 7999)+`0]}`)
	}},
	{"VPEC, details of small strings", func(tb testing.TB, size int) []byte {
		return detailsVPEC(tb, size, `{"s":[`+strings.Repeat(`"a",`, 3999)+`"a"]}`)
	}},
	{"VPEC, many small gaps", func(tb testing.TB, size int) []byte {
		doc := realVPEC(tb, 8000)
		gap := `{"gap_id":"g","gap_type":"t","severity":"Low","check":null,"sequence":null,"timestamp":"2026-11-24T00:00:00Z"},`
		gaps := strings.Repeat(gap, (size-len(doc))/len(gap)+1)
		return bytes.Replace(doc, []byte(`"gaps": [],`), []byte(`"gaps": [`+gaps[:len(gaps)-1]+`],`), 1)
	}},
	{"VPEC, deeply nested details", func(tb testing.TB, size int) []byte {
		return detailsVPEC(tb, size, strings.Repeat(`{"a":[`, 30)+"0"+strings.Repeat("]}", 30))
	}},
}

var (
	realCache = map[int][]byte{}
	// realTrust is the trust bundle of the last real VPEC made.
	realTrust string
)

// realVPEC is a sealed VPEC of realistic records (the 10k-record benchmark
// VPEC, scaled to size).
func realVPEC(tb testing.TB, size int) []byte {
	if d, ok := realCache[size]; ok {
		return d
	}
	l, err := testvectors.LargeVPEC(tb.TempDir(), max(1, size/780))
	if err != nil {
		tb.Fatal(err)
	}
	realCache[size] = l.Doc
	realTrust = l.BundlePath
	return l.Doc
}

// detailsVPEC is a VPEC of about size bytes whose every record carries
// details (its signature and chain do not verify: the parse is measured).
func detailsVPEC(tb testing.TB, size int, details string) []byte {
	small := realVPEC(tb, 8000)
	var v map[string]any
	if err := json.Unmarshal(small, &v); err != nil {
		tb.Fatal(err)
	}
	recs := v["records"].([]any)
	rec, _ := json.Marshal(recs[0])
	rec = bytes.Replace(rec, []byte(`"details":{"model":"pii-detector-v3","threshold":0.8}`), []byte(`"details":`+details), 1)
	v["records"] = []any{}
	head, _ := json.Marshal(v)
	var b bytes.Buffer
	b.Write(bytes.Replace(head, []byte(`"records":[]`), []byte(`"records":[`), 1)[:bytes.Index(head, []byte(`"records":[]`))+len(`"records":[`)])
	tail := head[bytes.Index(head, []byte(`"records":[]`))+len(`"records":[`):]
	for i := 1; b.Len() < size; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		r := bytes.Replace(rec, []byte(`"sequence":1,`), []byte(`"sequence":`+strconv.Itoa(i)+`,`), 1)
		b.Write(bytes.Replace(r, []byte(`-000000000001"`), fmt.Appendf(nil, `-%012d"`, i), 1))
	}
	b.Write(tail)
	return b.Bytes()
}

// TestVerifierMemory measures the verifier's peak resident memory per
// input size and shape, each in a fresh process (SVC_BENCH_MEMORY=1,10,100
// for sizes in MB). See docs/BENCHMARKS.md.
func TestVerifierMemory(t *testing.T) {
	sizes := os.Getenv("SVC_BENCH_MEMORY")
	if sizes == "" {
		t.Skip("set SVC_BENCH_MEMORY=1,10,100 (MB) to measure")
	}
	dir := t.TempDir()
	for _, s := range strings.Split(sizes, ",") {
		mb, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, shape := range memoryShapes {
			if f := os.Getenv("SVC_BENCH_SHAPE"); f != "" && !strings.Contains(shape.name, f) {
				continue
			}
			doc := shape.make(t, mb<<20)
			path := filepath.Join(dir, "doc.json")
			if err := os.WriteFile(path, doc, 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestVerifierMemoryChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "SVC_MEMORY_CHILD="+path)
			if shape.name == "VPEC, real records" {
				cmd.Env = append(cmd.Env, "SVC_MEMORY_TRUST="+realTrust)
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", shape.name, err, out)
			}
			var line string
			for _, l := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(l, "memory:") {
					line = strings.TrimPrefix(l, "memory:")
				}
			}
			var r struct {
				Bytes, RSS, Heap int64
				Verdict          string
				Seconds          float64
			}
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("%s: %v\n%s", shape.name, err, out)
			}
			t.Logf("| %d MB | %s | %.1f MB | %.0f MB (%.1fx) | %.0f MB (%.1fx) | %.2f s | %s |", mb, shape.name, float64(r.Bytes)/(1<<20),
				float64(r.RSS)/(1<<20), float64(r.RSS)/float64(r.Bytes), float64(r.Heap)/(1<<20), float64(r.Heap)/float64(r.Bytes), r.Seconds, r.Verdict)
		}
	}
}

// TestVerifierMemoryChild verifies one document and prints the peak
// resident set growth (VmHWM after minus VmRSS before reading it) and the
// peak heap in use, sampled.
func TestVerifierMemoryChild(t *testing.T) {
	path := os.Getenv("SVC_MEMORY_CHILD")
	if path == "" {
		t.Skip("child of TestVerifierMemory")
	}
	_, trust := loadVectors(t)
	if p := os.Getenv("SVC_MEMORY_TRUST"); p != "" {
		var err error
		if trust, err = signing.LoadBundle(p); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	// Reset the peak so it counts from here (Linux: write 5 to clear_refs).
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	before := procStatus(t, "VmRSS")
	stop := make(chan struct{})
	peakHeap := make(chan uint64)
	go func() {
		var m runtime.MemStats
		var peak uint64
		for {
			select {
			case <-stop:
				peakHeap <- peak
				return
			default:
			}
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			time.Sleep(time.Millisecond)
		}
	}()
	start := time.Now()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := verifyDoc(t, doc, verify.Options{Trust: trust})
	secs := time.Since(start).Seconds()
	close(stop)
	heap := <-peakHeap
	peak := procStatus(t, "VmHWM")
	runtime.KeepAlive(doc)
	out, _ := json.Marshal(map[string]any{"Bytes": len(doc), "RSS": peak - before, "Heap": heap, "Verdict": r.Verdict + ": " + r.Checks[0].Message[:min(60, len(r.Checks[0].Message))], "Seconds": secs})
	fmt.Printf("memory:%s\n", out)
}

func procStatus(t *testing.T, key string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip("no /proc")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return kb << 10
		}
	}
	t.Fatalf("%s not in /proc/self/status", key)
	return 0
}
