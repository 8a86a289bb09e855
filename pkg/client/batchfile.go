package client

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// BatchLine is one line of a batch file (ParseBatchLines): one record as
// the single form of svc record takes it.
type BatchLine struct {
	Check      string            `json:"check"`
	ManifestID string            `json:"manifest_id"`
	Result     vpec.CheckResult  `json:"result"`
	Input      string            `json:"input,omitempty"`
	Details    map[string]string `json:"details,omitempty"`
	Visibility vpec.Visibility   `json:"visibility,omitempty"`
}

// MaxBatchLineBytes bounds one line of a batch file.
const MaxBatchLineBytes = 1 << 20

// ErrBatchFile is the error of a batch file that cannot be read as JSON
// lines of records; the message names the line and the problem.
var ErrBatchFile = errors.New("svc client: batch file")

// ParseBatchLines reads JSON lines, each one record (BatchLine: check,
// manifest_id, result required; input text, details, visibility opaque or
// transparent optional), and returns them as batch items. Blank lines are
// skipped. Any bad line refuses the whole file, with an error matching
// ErrBatchFile that names the line: nothing is recorded from a file that
// is not entirely right.
func ParseBatchLines(r io.Reader) ([]BatchItem, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxBatchLineBytes)
	var out []BatchItem
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		item, err := parseBatchLine(line)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %w", ErrBatchFile, n, err)
		}
		out = append(out, item)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%w: line %d is longer than %d bytes", ErrBatchFile, len(out)+1, MaxBatchLineBytes)
		}
		return nil, fmt.Errorf("%w: %w", ErrBatchFile, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no record: write one JSON object per line, e.g. {\"check\":\"pii\",\"manifest_id\":\"sha256:…\",\"result\":\"pass\",\"input\":\"…\"}", ErrBatchFile)
	}
	return out, nil
}

func parseBatchLine(line []byte) (BatchItem, error) {
	var l BatchLine
	if _, err := document.Parse(line, &l); err != nil {
		return BatchItem{}, err
	}
	switch {
	case l.Check == "":
		return BatchItem{}, errors.New(`"check" is missing or empty: name the check, e.g. "check":"pii_detection"`)
	case l.ManifestID == "":
		return BatchItem{}, errors.New(`"manifest_id" is missing or empty: give the id 'svc manifest register' printed`)
	case !l.Result.Valid():
		return BatchItem{}, fmt.Errorf("result %q is not one of %v", l.Result, vpec.CheckResults())
	}
	var opts []RecordOption
	switch l.Visibility {
	case "", vpec.Opaque, vpec.Transparent:
		if l.Visibility != "" {
			opts = append(opts, WithVisibility(l.Visibility))
		}
	default:
		return BatchItem{}, fmt.Errorf("visibility %q: a batch line is opaque or transparent (a selective record needs its manifest: record it alone with --manifest-file)", l.Visibility)
	}
	if len(l.Details) > 0 {
		d := make(map[string]any, len(l.Details))
		for k, v := range l.Details {
			d[k] = v
		}
		opts = append(opts, WithDetails(d))
	}
	return BatchItem{Check: l.Check, ManifestID: l.ManifestID, Result: l.Result, Input: []byte(l.Input), Options: opts}, nil
}
