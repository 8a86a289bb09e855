package present

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/app/cli/internal/statefile"
	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

func TestSummary(t *testing.T) {
	tests := []struct {
		name string
		v    vpec.VPEC
		want string
	}{
		{"clean with a failed check", vpec.VPEC{RunID: "run_1", TotalChecksRun: 3, ChecksPassed: 2, ChecksFailed: 1, ProofLevelFloor: vpec.Execution, IsClean: true},
			"run_1: 3 checks (2 passed, 1 failed), floor execution, 0 gap(s), clean: no governance gaps"},
		{"gaps", vpec.VPEC{RunID: "run_2", TotalChecksRun: 1, ChecksPassed: 1, ProofLevelFloor: vpec.Execution, Gaps: make([]vpec.Gap, 2)},
			"run_2: 1 checks (1 passed, 0 failed), floor execution, 2 gap(s), not clean: see the gaps"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Summary(&tc.v); got != tc.want {
				t.Errorf("Summary = %q\nwant      %q", got, tc.want)
			}
			var b bytes.Buffer
			Closed(&b, &tc.v, "v.json")
			if b.String() != tc.want+" -> v.json\n" {
				t.Errorf("Closed printed %q", b.String())
			}
		})
	}
}

func TestFlush(t *testing.T) {
	changed := fmt.Errorf("%w: x", statefile.ErrNotUnsignedCopy)
	tests := []struct {
		name      string
		in        statefile.Flushed
		err       error
		json      string
		out, err2 string
	}{
		{"nothing", statefile.Flushed{}, nil,
			`{"delivered":0,"pending":0,"sealed":[],"written":[]}`, "0 delivered, 0 pending\n", ""},
		{"sealed, written, changed, retried, unreachable", statefile.Flushed{
			FlushResult: client.FlushResult{Delivered: 3, Sealed: []client.SealedRun{{RunID: "run_a", VPECID: "vpec_a"}, {RunID: "run_b"}}},
			Pending:     1,
			Copies: []statefile.CopyResult{
				{UnsignedCopy: statefile.UnsignedCopy{RunID: "run_a", Path: "/a.json"}, VPECID: "vpec_a"},
				{UnsignedCopy: statefile.UnsignedCopy{RunID: "run_c", Path: "/c.json"}, Err: changed},
				{UnsignedCopy: statefile.UnsignedCopy{RunID: "run_d", Path: "/d.json"}, Err: client.ErrUnavailable},
			},
			StateErr: errors.New("save run state: disk full"),
		}, client.ErrUnavailable,
			`{"delivered":3,"error":"svc client: service unavailable","pending":1,"sealed":[{"run_id":"run_a","vpec_id":"vpec_a"},{"run_id":"run_b","vpec_id":""}],` +
				`"warnings":["/c.json changed since the offline close of run_c: left alone; fetch the signed VPEC with 'svc vpec get run_c --out FILE'","save run state: disk full"],` +
				`"written":[{"run_id":"run_a","vpec_id":"vpec_a","path":"/a.json"}]}`,
			"3 delivered, 1 pending\nrun_a sealed: vpec_a\nrun_b sealed: (VPEC id not reported)\nrun_a: signed VPEC vpec_a written over the unsigned offline VPEC /a.json\n",
			"svc: warning: /c.json changed since the offline close of run_c: left alone; fetch the signed VPEC with 'svc vpec get run_c --out FILE'\nsvc: warning: save run state: disk full\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFlush(tc.in, tc.err)
			j, err := json.Marshal(f.JSON())
			if err != nil {
				t.Fatal(err)
			}
			if string(j) != tc.json {
				t.Errorf("JSON %s\nwant %s", j, tc.json)
			}
			var out, errw bytes.Buffer
			f.Print(&out, &errw, "svc")
			if out.String() != tc.out || errw.String() != tc.err2 {
				t.Errorf("printed %q / %q", out.String(), errw.String())
			}
		})
	}
}

func TestProgress(t *testing.T) {
	var off bytes.Buffer
	p := NewProgress(&off, false, "model 1/1")
	p.Update(5, 10)
	p.Update(10, 10)
	p.Done()
	if off.Len() != 0 {
		t.Errorf("an off bar drew %q", off.String())
	}
	var on bytes.Buffer
	p = NewProgress(&on, true, "model 1/1")
	p.Update(12, 10) // more passes than announced: no panic, a full bar
	p.Update(10, 10)
	p.Done()
	if s := on.String(); !strings.Contains(s, "model 1/1 ["+strings.Repeat("#", 30)+"] 10/10 passes") || !strings.HasSuffix(s, "\r\033[K") {
		t.Errorf("bar %q", s)
	}
}
