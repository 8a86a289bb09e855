// Package loadgen drives a running service over HTTP: parallel runs, each
// recording chained records, with every acknowledgement and its latency
// kept. The ingest benchmark and the crash test use it.
package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// Config describes a load.
type Config struct {
	URL           string // base URL, e.g. http://127.0.0.1:8080
	Key           string // API key
	Runs          int    // runs driven in parallel (one worker each)
	RecordsPerRun int    // records per run; 0 means until ctx ends
	// Batch, when above 1, sends each run's records in batches of that
	// many (POST /api/v1/runs/{run_id}/records:batch); every record of an
	// acknowledged batch is acknowledged, with the batch's latency.
	Batch int
	HTTP  *http.Client
}

// Run is one run's outcome.
type Run struct {
	ID    string
	Acked []string // record ids acknowledged (2xx), in sequence order
}

// Result is the outcome of a load.
type Result struct {
	Runs      []*Run
	Latencies []time.Duration // of acknowledged records
	Elapsed   time.Duration
	Errors    int // requests that failed (connection errors or non-2xx)
	FirstErr  error
}

// Acked counts acknowledged records.
func (r *Result) Acked() int { return len(r.Latencies) }

// Throughput is acknowledged records per second.
func (r *Result) Throughput() float64 { return float64(r.Acked()) / r.Elapsed.Seconds() }

// Percentile returns the p-th percentile (0-100) latency.
func (r *Result) Percentile(p float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	l := slices.Clone(r.Latencies)
	slices.Sort(l)
	i := int(p / 100 * float64(len(l)-1))
	return l[i]
}

// Drive runs the load until every run has its records or ctx ends. With
// RecordsPerRun set, every run is opened and every record body (chained,
// encoded) prepared before the clock starts, so the result measures the
// service, not the load generator.
func Drive(ctx context.Context, cfg Config) *Result {
	hc := httpClient(cfg.HTTP, cfg.Runs)
	res := &Result{}
	var mu sync.Mutex
	fail := counter(&mu, &res.Errors, &res.FirstErr)
	// Open the runs and prepare the bodies.
	type job struct {
		run    *Run
		ids    []string
		bodies [][]byte
		prev   [32]byte
	}
	jobs := make([]*job, 0, cfg.Runs)
	for w := 0; w < cfg.Runs; w++ {
		var run api.Run
		if err := post(ctx, hc, cfg, "/api/v1/runs", api.OpenRunRequest{WorkflowID: fmt.Sprintf("load-%d", w)}, &run); err != nil {
			fail(err)
			continue
		}
		j := &job{run: &Run{ID: run.RunID}, prev: vpec.Genesis(run.RunID)}
		for seq := int64(1); seq <= int64(cfg.RecordsPerRun); seq++ {
			id, body, next, err := encode(run.RunID, seq, j.prev)
			if err != nil {
				fail(err)
				break
			}
			j.ids, j.bodies, j.prev = append(j.ids, id), append(j.bodies, body), next
		}
		jobs = append(jobs, j)
		res.Runs = append(res.Runs, j.run)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func(j *job) {
			defer wg.Done()
			if cfg.Batch > 1 {
				driveBatches(ctx, hc, cfg, j.run, j.ids, j.bodies, j.prev, res, &mu, fail)
				return
			}
			for i := 0; cfg.RecordsPerRun == 0 || i < len(j.bodies); i++ {
				if ctx.Err() != nil {
					return
				}
				id, body := "", []byte(nil)
				if cfg.RecordsPerRun == 0 {
					var err error
					if id, body, j.prev, err = encode(j.run.ID, int64(i+1), j.prev); err != nil {
						fail(err)
						return
					}
				} else {
					id, body = j.ids[i], j.bodies[i]
				}
				t0 := time.Now()
				var rr api.RecordResult
				if err := postRaw(ctx, hc, cfg, "/api/v1/runs/"+j.run.ID+"/records", body, &rr); err != nil {
					if ctx.Err() == nil {
						fail(err)
					}
					return // the chain cannot go on past an unacknowledged record
				}
				d := time.Since(t0)
				mu.Lock()
				j.run.Acked = append(j.run.Acked, id)
				res.Latencies = append(res.Latencies, d)
				mu.Unlock()
			}
		}(j)
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	return res
}

// driveBatches sends a run's records in batches of cfg.Batch: the
// prepared ones (ids, bodies), or, without them, new ones chained after
// prev until ctx ends.
func driveBatches(ctx context.Context, hc *http.Client, cfg Config, run *Run, ids []string, bodies [][]byte, prev [32]byte, res *Result, mu *sync.Mutex, fail func(error)) {
	var seq int64
	for i := 0; cfg.RecordsPerRun == 0 || i < len(bodies); i += cfg.Batch {
		if ctx.Err() != nil {
			return
		}
		var bids []string
		var bbodies [][]byte
		if cfg.RecordsPerRun == 0 {
			for range cfg.Batch {
				seq++
				id, body, next, err := encode(run.ID, seq, prev)
				if err != nil {
					fail(err)
					return
				}
				bids, bbodies, prev = append(bids, id), append(bbodies, body), next
			}
		} else {
			end := min(i+cfg.Batch, len(bodies))
			bids, bbodies = ids[i:end], bodies[i:end]
		}
		body := append([]byte(`{"records":[`), bytes.Join(bbodies, []byte(","))...)
		body = append(body, "]}"...)
		t0 := time.Now()
		var br api.RecordBatchResult
		if err := postRaw(ctx, hc, cfg, "/api/v1/runs/"+run.ID+"/records:batch", body, &br); err != nil {
			if ctx.Err() == nil {
				fail(err)
			}
			return
		}
		d := time.Since(t0)
		mu.Lock()
		run.Acked = append(run.Acked, bids...)
		for range bids {
			res.Latencies = append(res.Latencies, d)
		}
		mu.Unlock()
	}
}

// encode builds record seq of a run chained after prev and returns its id,
// its JSON body and its chain value.
func encode(runID string, seq int64, prev [32]byte) (string, []byte, [32]byte, error) {
	recs := []vpec.Record{Record(runID, seq)}
	next, err := issue.Chain(prev, recs)
	if err != nil {
		return "", nil, prev, err
	}
	body, err := json.Marshal(recs[0])
	return recs[0].RecordID, body, next, err
}

// Record returns a realistic record for sequence seq of a run (chain hash
// not yet set).
func Record(runID string, seq int64) vpec.Record {
	checks := []string{"pii_detection", "toxicity", "prompt_injection", "policy_check"}
	return vpec.Record{
		RecordID: names.NewOrderedID("rec_", time.Now()), Sequence: seq, Check: checks[seq%4],
		ManifestID: commitment.String([]byte(checks[seq%4])), CheckResult: vpec.ResultPass,
		ProofLevel: vpec.Execution, CommitmentAlgorithm: "sha256",
		CommitmentHash:   commitment.String([]byte(fmt.Sprint(runID, seq))),
		OutputCommitment: commitment.String([]byte(fmt.Sprint("out", runID, seq))),
		Visibility:       vpec.Opaque, RecordedAt: vpec.FormatTime(time.Now()),
		Details: map[string]any{"model": "pii-detector-v3", "threshold": 0.8},
	}
}

func post(ctx context.Context, hc *http.Client, cfg Config, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return postRaw(ctx, hc, cfg, path, b, out)
}

func postRaw(ctx context.Context, hc *http.Client, cfg Config, path string, b []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.URL+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+cfg.Key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, bytes.TrimSpace(data))
	}
	return json.Unmarshal(data, out)
}

// Close closes a run and returns the VPEC bytes and how long it took.
func Close(ctx context.Context, hc *http.Client, url, key, runID string) ([]byte, time.Duration, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/api/v1/runs/"+runID+"/close", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	t0 := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	d := time.Since(t0)
	if err != nil {
		return nil, d, err
	}
	if resp.StatusCode != 200 {
		return nil, d, fmt.Errorf("close %s: %d %s", runID, resp.StatusCode, bytes.TrimSpace(data))
	}
	return data, d, nil
}

// Ping sends n GET /healthz requests over the given number of parallel
// clients: the HTTP floor an ingest result is compared with.
func Ping(ctx context.Context, url string, clients, n int) *Result {
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: clients + 4}}
	res := &Result{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := c; i < n; i += clients {
				t0 := time.Now()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/healthz", nil)
				resp, err := hc.Do(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				d := time.Since(t0)
				mu.Lock()
				if err != nil || resp.StatusCode != 200 {
					res.Errors++
				} else {
					res.Latencies = append(res.Latencies, d)
				}
				mu.Unlock()
			}
		}(c)
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	return res
}

// RunsConfig describes a whole-runs load: Clients workers, each opening a
// run, recording RecordsPerRun records one request at a time and closing
// it, again and again until For has passed (or ctx ends).
type RunsConfig struct {
	URLs          []string // servers; worker i uses URLs[i%len(URLs)]
	Key           string   // API key
	Clients       int      // workers
	RecordsPerRun int      // records between open and close (6 if 0)
	For           time.Duration
	HTTP          *http.Client
}

// RunsResult is the outcome of a whole-runs load.
type RunsResult struct {
	Runs     int             // runs opened, recorded and closed with a 200
	Closes   []time.Duration // latency of each successful close
	Elapsed  time.Duration
	Errors   int // runs abandoned on a failed request
	FirstErr error
}

// Throughput is whole runs per second.
func (r *RunsResult) Throughput() float64 { return float64(r.Runs) / r.Elapsed.Seconds() }

// ClosePercentile returns the p-th percentile (0-100) close latency.
func (r *RunsResult) ClosePercentile(p float64) time.Duration {
	return (&Result{Latencies: r.Closes}).Percentile(p)
}

// DriveRuns runs a whole-runs load. A worker that sees a request fail
// counts the error and starts a new run; the load stops starting runs once
// For has passed, and Elapsed ends when the last run in flight is done.
func DriveRuns(ctx context.Context, cfg RunsConfig) *RunsResult {
	hc := httpClient(cfg.HTTP, cfg.Clients)
	n := cfg.RecordsPerRun
	if n == 0 {
		n = 6
	}
	res := &RunsResult{}
	var mu sync.Mutex
	fail := counter(&mu, &res.Errors, &res.FirstErr)
	start := time.Now()
	deadline := start.Add(cfg.For)
	var wg sync.WaitGroup
	for w := 0; w < cfg.Clients; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			one := Config{URL: cfg.URLs[w%len(cfg.URLs)], Key: cfg.Key}
			for ctx.Err() == nil && time.Now().Before(deadline) {
				d, err := wholeRun(ctx, hc, one, fmt.Sprintf("whole-%d", w), n)
				if err != nil {
					if ctx.Err() == nil {
						fail(err)
					}
					continue
				}
				mu.Lock()
				res.Runs++
				res.Closes = append(res.Closes, d)
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	return res
}

// wholeRun opens a run, records n chained records and closes it; it
// returns the close's latency.
func wholeRun(ctx context.Context, hc *http.Client, cfg Config, workflow string, n int) (time.Duration, error) {
	var run api.Run
	if err := post(ctx, hc, cfg, "/api/v1/runs", api.OpenRunRequest{WorkflowID: workflow}, &run); err != nil {
		return 0, fmt.Errorf("open: %w", err)
	}
	prev := vpec.Genesis(run.RunID)
	for seq := int64(1); seq <= int64(n); seq++ {
		_, body, next, err := encode(run.RunID, seq, prev)
		if err != nil {
			return 0, err
		}
		var rr api.RecordResult
		if err := postRaw(ctx, hc, cfg, "/api/v1/runs/"+run.RunID+"/records", body, &rr); err != nil {
			return 0, fmt.Errorf("record %d: %w", seq, err)
		}
		prev = next
	}
	_, d, err := Close(ctx, hc, cfg.URL, cfg.Key, run.RunID)
	return d, err
}

// httpClient is hc, or a client keeping a connection per parallel client.
func httpClient(hc *http.Client, parallel int) *http.Client {
	if hc != nil {
		return hc
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: parallel + 4}}
}

// counter returns a function that counts a failure in *n and keeps the
// first in *first, under mu.
func counter(mu *sync.Mutex, n *int, first *error) func(error) {
	return func(err error) {
		mu.Lock()
		defer mu.Unlock()
		*n++
		if *first == nil {
			*first = err
		}
	}
}
