// Command ingestbench measures record ingest against a running service:
// throughput and latency percentiles of acknowledged records, then the time
// to close a run of -close-records records; with -whole-runs N, N clients
// each opening a run, recording 6 records and closing it in a loop (runs/s
// and close latency), alternating between the servers -url lists.
//
//	go run ./internal/loadgen/ingestbench -url http://127.0.0.1:8080 -key pk_live_... -runs 32 -records 500 -batch 100
//	go run ./internal/loadgen/ingestbench -url http://127.0.0.1:8080,http://127.0.0.1:8081 -key pk_live_... -records 0 -close-records 0 -whole-runs 16
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/svc-gov/svc/internal/loadgen"
)

func main() {
	urls := flag.String("url", "http://127.0.0.1:8080", "service base URL; for -whole-runs, a comma-separated list of servers the clients alternate between (the other measurements use the first)")
	key := flag.String("key", os.Getenv("SVC_API_KEY"), "API key (default $SVC_API_KEY)")
	runs := flag.Int("runs", 32, "runs recorded in parallel")
	records := flag.Int("records", 500, "records per run")
	closeRecords := flag.Int("close-records", 10000, "records of the run whose close is timed (0 to skip)")
	batch := flag.Int("batch", 0, "also measure the batch API: records sent in batches of this many (0 to skip)")
	batchRecords := flag.Int("batch-records", 5000, "records per run in the batch measurement")
	wholeRuns := flag.Int("whole-runs", 0, "also measure whole runs (open + -whole-run-records records + close) with this many clients (0 to skip)")
	wholeRecords := flag.Int("whole-run-records", 6, "records per run in the whole-runs measurement")
	wholeFor := flag.Duration("whole-runs-for", 10*time.Second, "how long clients start new runs in the whole-runs measurement")
	flag.Parse()
	servers := strings.Split(*urls, ",")
	url := &servers[0]
	if *key == "" {
		fmt.Fprintln(os.Stderr, "ingestbench: -key or SVC_API_KEY is required")
		os.Exit(2)
	}
	ctx := context.Background()
	// Baseline in the same run: the HTTP round trip alone (GET /healthz)
	// with the same number of parallel clients and requests.
	n := *runs * *records
	if n == 0 {
		n = *runs * 500
	}
	base := loadgen.Ping(ctx, *url, *runs, n)
	fmt.Printf("baseline: %d GET /healthz over %d parallel clients: %.0f requests/s; latency p50 %.2f ms, p99 %.2f ms\n",
		base.Acked(), *runs, base.Throughput(), ms(base.Percentile(50)), ms(base.Percentile(99)))
	res := &loadgen.Result{}
	if *records > 0 {
		res = loadgen.Drive(ctx, loadgen.Config{URL: *url, Key: *key, Runs: *runs, RecordsPerRun: *records})
		report(res, *runs, base)
	}
	if *batch > 1 {
		br := loadgen.Drive(ctx, loadgen.Config{URL: *url, Key: *key, Runs: *runs, RecordsPerRun: *batchRecords, Batch: *batch})
		fmt.Printf("batch: %d records acknowledged in %.2fs in batches of %d over %d parallel runs: %.0f records/s (%.0f requests/s); batch latency p50 %.2f ms, p99 %.2f ms; errors %d\n",
			br.Acked(), br.Elapsed.Seconds(), *batch, *runs, br.Throughput(), br.Throughput()/float64(*batch),
			ms(br.Percentile(50)), ms(br.Percentile(99)), br.Errors)
		fmt.Printf("ratio: batch records/s is %.2fx the /healthz baseline (requests/s), %.1fx single-record ingest\n", br.Throughput()/base.Throughput(), br.Throughput()/res.Throughput())
		if br.FirstErr != nil {
			fmt.Println("batch first error:", br.FirstErr)
		}
		res.Errors += br.Errors
	}
	if *wholeRuns > 0 {
		wr := loadgen.DriveRuns(ctx, loadgen.RunsConfig{URLs: servers, Key: *key, Clients: *wholeRuns, RecordsPerRun: *wholeRecords, For: *wholeFor})
		fmt.Printf("whole runs: %d runs (open + %d records + close) in %.2fs over %d clients and %d server(s): %.0f runs/s; close p50 %.2f ms, p99 %.2f ms; errors %d\n",
			wr.Runs, *wholeRecords, wr.Elapsed.Seconds(), *wholeRuns, len(servers), wr.Throughput(),
			ms(wr.ClosePercentile(50)), ms(wr.ClosePercentile(99)), wr.Errors)
		if wr.FirstErr != nil {
			fmt.Println("whole runs first error:", wr.FirstErr)
		}
		res.Errors += wr.Errors
	}
	if *closeRecords > 0 {
		big := loadgen.Drive(ctx, loadgen.Config{URL: *url, Key: *key, Runs: 1, RecordsPerRun: *closeRecords})
		if big.Acked() != *closeRecords {
			fmt.Fprintf(os.Stderr, "ingestbench: only %d of %d records acknowledged: %v\n", big.Acked(), *closeRecords, big.FirstErr)
			os.Exit(1)
		}
		doc, d, err := loadgen.Close(ctx, http.DefaultClient, *url, *key, big.Runs[0].ID)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ingestbench:", err)
			os.Exit(1)
		}
		fmt.Printf("close: %d-record run sealed in %.0f ms (VPEC %d bytes)\n", *closeRecords, ms(d), len(doc))
	}
	if res.Errors > 0 {
		os.Exit(1)
	}
}

// report prints the single-record ingest result against the baseline.
func report(res *loadgen.Result, runs int, base *loadgen.Result) {
	fmt.Printf("ingest: %d records acknowledged in %.2fs over %d parallel runs: %.0f records/s; latency p50 %.2f ms, p99 %.2f ms, max %.2f ms; errors %d\n",
		res.Acked(), res.Elapsed.Seconds(), runs, res.Throughput(),
		ms(res.Percentile(50)), ms(res.Percentile(99)), ms(res.Percentile(100)), res.Errors)
	fmt.Printf("ratio: ingest throughput is %.2fx the /healthz baseline; p99 %.1fx\n", res.Throughput()/base.Throughput(), float64(res.Percentile(99))/float64(base.Percentile(99)))
	if res.FirstErr != nil {
		fmt.Println("first error:", res.FirstErr)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
