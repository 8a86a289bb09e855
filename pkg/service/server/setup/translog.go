package setup

import (
	"bytes"
	"context"
	"crypto"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	_ "github.com/go-sql-driver/mysql" // the MySQL backend's driver

	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/service/logwriter"
	"github.com/svc-gov/svc/pkg/service/server"
)

// LogOptions configure the transparency log of svc serve
// (docs/TRANSPARENCY.md).
type LogOptions struct {
	// Off runs the service without a log (VPECs get no log index and no
	// receipt).
	Off bool
	// Origin names the log (default: DefaultLogOrigin of the signing key);
	// fixed once the log exists.
	Origin string
	// MySQLDSN, when set, keeps the log in a MySQL or MariaDB database
	// (several server processes share it) instead of the POSIX directory
	// in the data directory (one process).
	MySQLDSN string
	// WitnessPolicyFile is a witness policy (tlog.ParseWitnessPolicy);
	// "" for none.
	WitnessPolicyFile string
	// CheckpointInterval and WitnessTimeout tune the log (zero: the
	// logwriter defaults).
	CheckpointInterval time.Duration
	WitnessTimeout     time.Duration
	// OnWitness, if set, is called with every witness outcome besides
	// the log line a failure gets (a metrics hook: it must not block).
	OnWitness func(logwriter.WitnessEvent)
}

// DefaultLogOrigin is the origin a new log gets when none is given:
// svc.invalid/log/<signing key id>, unique per service and plainly not a
// real host (give --log-origin to name it after the service's host).
func DefaultLogOrigin(signingKeyID string) string { return "svc.invalid/log/" + signingKeyID }

// Log is an open transparency log with its key material.
type Log struct {
	*logwriter.Log
	Material *server.LogMaterial
	// Created is true when the log's key was created by this start.
	Created bool
	// Policy is the witness policy, nil without one.
	Policy *tlog.WitnessPolicy
	db     *sql.DB
}

// Close closes the log (waiting, within ctx, for a checkpoint to cover
// what this process appended) and its database.
func (l *Log) Close(ctx context.Context) error {
	err := l.Log.Close(ctx)
	if l.db != nil {
		err = errors.Join(err, l.db.Close())
	}
	return err
}

// OpenLog opens (creating on first start) the transparency log of the
// data directory dataDir, signing checkpoints with signer (nil: the log
// key file of the data directory). Witness failures are logged as warnings (a
// split view as an error) and passed to o.OnWitness.
func OpenLog(ctx context.Context, dataDir, signingKeyID string, signer crypto.Signer, o LogOptions, log *slog.Logger) (*Log, error) {
	m, created, err := server.LoadOrCreateLogMaterial(dataDir, o.Origin, DefaultLogOrigin(signingKeyID), signer)
	if err != nil {
		return nil, err
	}
	out := &Log{Material: m, Created: created}
	if o.WitnessPolicyFile != "" {
		text, err := os.ReadFile(o.WitnessPolicyFile)
		if err != nil {
			return nil, fmt.Errorf("witness policy: %w", err)
		}
		if out.Policy, err = tlog.ParseWitnessPolicy(text); err != nil {
			return nil, fmt.Errorf("witness policy %s: %w", o.WitnessPolicyFile, err)
		}
	}
	cfg := logwriter.Config{
		Origin: m.Key.Origin(), Signer: m.Signer, WitnessPolicy: out.Policy, WitnessTimeout: o.WitnessTimeout,
		CheckpointInterval: o.CheckpointInterval,
		OnWitness: func(e logwriter.WitnessEvent) {
			switch {
			case e.Err == nil:
			case errors.Is(e.Err, logwriter.ErrWitnessConflict):
				log.Error("a witness saw a different history of the transparency log (split view): receipts stay unwitnessed", "witness", e.Witness, "url", e.URL, "checkpoint_size", e.CheckpointSize, "status", e.Status, "error", e.Err.Error())
			default:
				log.Warn("a witness did not cosign the transparency log's checkpoint: receipts stay unwitnessed until one is", "witness", e.Witness, "url", e.URL, "checkpoint_size", e.CheckpointSize, "status", e.Status, "error", e.Err.Error())
			}
			if o.OnWitness != nil {
				o.OnWitness(e)
			}
		},
	}
	if o.MySQLDSN != "" {
		db, err := sql.Open("mysql", o.MySQLDSN)
		if err != nil {
			return nil, fmt.Errorf("transparency log database %s: %w", redactMySQL(o.MySQLDSN), err)
		}
		cfg.DB, out.db = db, db
	} else {
		cfg.Dir = m.TilesDir
	}
	if out.Log, err = logwriter.Open(ctx, cfg); err != nil {
		if out.db != nil {
			_ = out.db.Close()
		}
		return nil, fmt.Errorf("transparency log: %w", err)
	}
	return out, nil
}

// redactMySQL hides the password of a MySQL DSN (user:password@tcp(...)/db).
func redactMySQL(dsn string) string {
	at := strings.LastIndex(dsn, "@")
	if at < 0 {
		return dsn
	}
	if c := strings.Index(dsn[:at], ":"); c >= 0 {
		return dsn[:c+1] + "****" + dsn[at:]
	}
	return dsn
}

// WatchCheckpoints calls seen with the size and the time each new
// checkpoint of l is first seen, checking every interval until ctx ends
// (the hooks of svc_log_checkpoint_age_seconds and
// svc_log_integration_duration_seconds). It returns at once.
func (l *Log) WatchCheckpoints(ctx context.Context, interval time.Duration, seen func(size uint64, at time.Time)) {
	go func() {
		var last []byte
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if cp, err := l.Checkpoint(ctx); err == nil && !bytes.Equal(cp, last) {
				if size, ok := checkpointSize(cp); ok {
					last = cp
					seen(size, time.Now())
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// checkpointSize is the tree size of a C2SP checkpoint: its second line.
func checkpointSize(cp []byte) (uint64, bool) {
	lines := strings.SplitN(string(cp), "\n", 3)
	if len(lines) < 3 {
		return 0, false
	}
	size, err := strconv.ParseUint(lines[1], 10, 64)
	return size, err == nil
}
