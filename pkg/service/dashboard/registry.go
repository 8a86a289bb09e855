package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/store"
)

// Model status marks of the registry page.
const (
	StatusPublished = "published"
	StatusRequested = "requested"
	StatusMissing   = "missing"
)

// RegistryOpenRunScan and RegistryOpenRecordScan bound the records of
// open runs (no VPEC yet) the registry page reads: the most recent open
// runs, and at most that many records in all.
const (
	RegistryOpenRunScan    = 20
	RegistryOpenRecordScan = 10000
)

var errScanDone = errors.New("scan bound reached")

// openRunModels counts, per model, the open runs whose records name it.
func openRunModels(ctx context.Context, st Storage, orgID, env string, budget *scanBudget) (map[string]int, error) {
	runs, err := st.Runs.RunsOfOrg(ctx, orgID, store.RunFilter{State: "open", Environment: env, Limit: RegistryOpenRunScan})
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	left := RegistryOpenRecordScan
	for _, run := range runs {
		here := map[string]bool{}
		err := st.Runs.EachRecord(ctx, run.ID, func(r store.Record) error {
			if left--; left < 0 || !budget.take(int64(len(r.Body))) {
				return errScanDone
			}
			var rec vpec.Record
			if json.Unmarshal(r.Body, &rec) == nil {
				h := rec.ONNXModelHash
				if h == "" && rec.BoundedInference != nil {
					h = rec.BoundedInference.ONNXModelHash
				}
				if _, err := commitment.ParseSHA256(h); err == nil {
					here[h] = true
				}
			}
			return nil
		})
		for h := range here {
			out[h]++
		}
		if errors.Is(err, errScanDone) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RegistryVPECScan bounds how many of the organisation's most recently
// opened sealed runs the registry page reads the VPECs of, to find models
// and count their gaps (within Config.ScanBytes).
const RegistryVPECScan = 200

// Model is one row of the registry page: a model (by onnx_model_hash)
// named by the organisation's manifests, VPEC records or calibration
// requests, and its profile status.
type Model struct {
	Hash string
	// Seen says where the model was found, e.g. "manifest pii-check, stage
	// classify" or "records of 3 VPECs".
	Seen []string
	// Status is StatusPublished, StatusRequested or StatusMissing.
	Status string
	// Profile is the published profile covering the model (Published).
	Profile *ProfileSummary
	// Requests are the organisation's calibration requests for the model.
	Requests []Request
	// MissingGaps counts the model_profile_missing gaps of its records in
	// the scanned VPECs.
	MissingGaps int
}

// ProfileSummary is what the registry shows of a published profile.
type ProfileSummary struct {
	ID              string
	GPUClasses      []string
	CalibrationDate string
	PublishedAt     time.Time
}

// Request is a calibration request as the registry shows it.
type Request struct {
	store.CalibrationRequest
	// EstimatedBy is CreatedAt plus the estimated completion.
	EstimatedBy time.Time
}

// Open reports whether the request is still queued or in progress.
func (r Request) Open() bool { return r.Status == "queued" || r.Status == "in_progress" }

func estimate(c store.CalibrationRequest) time.Time {
	if d, err := time.ParseDuration(c.EstimatedCompletion); err == nil {
		return c.CreatedAt.Add(d)
	}
	var days int
	if _, err := fmt.Sscanf(c.EstimatedCompletion, "%dd", &days); err == nil {
		return c.CreatedAt.AddDate(0, 0, days)
	}
	return time.Time{}
}

// Models lists the models of an organisation with their status, as seen
// from one environment (env: the runs and VPECs read are that
// environment's; manifests and calibration requests are the
// organisation's), sorted missing first (most gaps first), then
// requested, then published, then by hash. It reads the organisation's manifests (stages' optional
// onnx_model_hash), its RegistryVPECScan most recent VPECs (records'
// onnx_model_hash and bounded_inference.onnx_model_hash; the
// model_profile_missing gaps by their sequence), the records of its most
// recent open runs (within RegistryOpenRunScan and RegistryOpenRecordScan)
// and its calibration requests; profiles are the service's published ones.
//
// It reads at most scanBytes bytes of VPECs and records (see
// Config.ScanBytes); Scan says what it skipped.
func Models(ctx context.Context, st Storage, orgID, env string, scanBytes int64) ([]Model, *Scan, error) {
	budget := newBudget(scanBytes)
	models, err := models(ctx, st, orgID, env, budget)
	return models, &budget.Scan, err
}

func models(ctx context.Context, st Storage, orgID, env string, budget *scanBudget) ([]Model, error) {
	byHash := map[string]*Model{}
	get := func(h string) *Model {
		m, ok := byHash[h]
		if !ok {
			m = &Model{Hash: h}
			byHash[h] = m
		}
		return m
	}
	manifests, err := st.Manifests.ManifestsOfOrg(ctx, orgID)
	if err != nil {
		return nil, err
	}
	for _, mf := range manifests {
		var m api.Manifest
		if json.Unmarshal(mf.Body, &m) != nil {
			continue
		}
		for _, stg := range m.Stages {
			if _, err := commitment.ParseSHA256(stg.ONNXModelHash); err == nil {
				mm := get(stg.ONNXModelHash)
				mm.Seen = append(mm.Seen, fmt.Sprintf("manifest %s, stage %s", m.Name, stg.StageName))
			}
		}
	}
	runs, err := st.Runs.RunsOfOrg(ctx, orgID, store.RunFilter{State: "sealed", Environment: env, Limit: RegistryVPECScan})
	if err != nil {
		return nil, err
	}
	inVPECs := map[string]int{}
	for _, run := range runs {
		v, err := budget.vpec(ctx, st.VPECs, run)
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		bySeq := map[int64]string{}
		here := map[string]bool{}
		for _, rec := range v.Records {
			h := rec.ONNXModelHash
			if h == "" && rec.BoundedInference != nil {
				h = rec.BoundedInference.ONNXModelHash
			}
			if _, err := commitment.ParseSHA256(h); err != nil {
				continue
			}
			bySeq[rec.Sequence] = h
			here[h] = true
		}
		for h := range here {
			get(h)
			inVPECs[h]++
		}
		for _, g := range v.Gaps {
			if g.GapType == "model_profile_missing" && g.Sequence != nil {
				if h, ok := bySeq[*g.Sequence]; ok {
					get(h).MissingGaps++
				}
			}
		}
	}
	for h, n := range inVPECs {
		get(h).Seen = append(get(h).Seen, fmt.Sprintf("records of %d VPEC(s)", n))
	}
	open, err := openRunModels(ctx, st, orgID, env, budget)
	if err != nil {
		return nil, err
	}
	for h, n := range open {
		get(h).Seen = append(get(h).Seen, fmt.Sprintf("records of %d open run(s)", n))
	}
	reqs, err := st.Calibrations.CalibrationRequestsOfOrg(ctx, orgID)
	if err != nil {
		return nil, err
	}
	for _, c := range reqs {
		m := get(c.ModelHash)
		m.Requests = append(m.Requests, Request{CalibrationRequest: c, EstimatedBy: estimate(c)})
	}
	out := make([]Model, 0, len(byHash))
	for _, m := range byHash {
		if len(m.Requests) > 0 && len(m.Seen) == 0 {
			m.Seen = append(m.Seen, "calibration request")
		}
		p, err := st.Profiles.ProfileByModelHash(ctx, m.Hash)
		switch {
		case err == nil:
			m.Status = StatusPublished
			m.Profile = &ProfileSummary{ID: p.ID, PublishedAt: p.PublishedAt}
			if pp, err := profile.Parse(p.Body); err == nil {
				m.Profile.GPUClasses, m.Profile.CalibrationDate = pp.CalibratedGPUClasses, pp.CalibrationDate
			}
		case !errors.Is(err, store.ErrNotFound):
			return nil, err
		case slices.ContainsFunc(m.Requests, Request.Open):
			m.Status = StatusRequested
		default:
			m.Status = StatusMissing
		}
		out = append(out, *m)
	}
	rank := map[string]int{StatusMissing: 0, StatusRequested: 1, StatusPublished: 2}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if rank[a.Status] != rank[b.Status] {
			return rank[a.Status] < rank[b.Status]
		}
		if a.MissingGaps != b.MissingGaps {
			return a.MissingGaps > b.MissingGaps
		}
		return a.Hash < b.Hash
	})
	return out, nil
}

// Scan says what a page view skipped to stay within Config.ScanBytes.
type Scan struct {
	// SkippedVPECs counts the VPECs not read, SkippedBytes their runs'
	// record bytes.
	SkippedVPECs int
	SkippedBytes int64
	// RecordsCut reports that the scan of open runs' records stopped early.
	RecordsCut bool
	// Limit is the budget.
	Limit int64
}

// scanBudget is what is left of a page view's ScanBytes.
type scanBudget struct {
	Scan
	left int64
}

func newBudget(n int64) *scanBudget { return &scanBudget{Scan: Scan{Limit: n}, left: n} }

// take spends n bytes if they fit.
func (b *scanBudget) take(n int64) bool {
	if n > b.left {
		b.RecordsCut = true
		return false
	}
	b.left -= n
	return true
}

// vpec reads and decodes the VPEC of a sealed run if the run's record
// bytes (which the VPEC holds, plus a bounded header) fit in the budget;
// nil when the run has no VPEC, the VPEC is skipped or not readable.
func (b *scanBudget) vpec(ctx context.Context, st store.VPECReader, run store.Run) (*vpec.VPEC, error) {
	if run.VPECID == "" {
		return nil, nil
	}
	if run.RecordBytes > b.left {
		b.SkippedVPECs++
		b.SkippedBytes += run.RecordBytes
		return nil, nil
	}
	b.left -= run.RecordBytes
	sv, err := st.VPEC(ctx, run.OrgID, run.VPECID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var v vpec.VPEC
	if json.Unmarshal(sv.Body, &v) != nil {
		return nil, nil
	}
	return &v, nil
}
