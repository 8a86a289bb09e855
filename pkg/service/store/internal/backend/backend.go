// Package backend is what the SQLite and PostgreSQL stores share where the
// SQL dialect allows: the columns and the scanning of every row shape, the
// error mapping onto the store's sentinels, the record append and the
// two-phase seal as sequences of steps over a backend's transaction
// (RunTx), paging through a run's records, and the small decisions of
// session claims and closes. Each backend keeps its SQL, its transactions
// and its locking; what a row means and what a state allows is written
// once, here.
package backend

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

// Scanner is one row: *sql.Row, *sql.Rows, pgx.Row, pgx.Rows.
type Scanner interface {
	Scan(dest ...any) error
}

// Rows is a result set: *sql.Rows, pgx.Rows. The caller closes it.
type Rows interface {
	Scanner
	Next() bool
	Err() error
}

// Collect scans every row of rows with scan; none is an empty slice, not
// nil.
func Collect[T any](rows Rows, scan func(Scanner) (T, error)) ([]T, error) {
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// At is the scan destination of a timestamp column into t, in UTC:
// SQLite's text (RFC 3339, as the SQLite store writes it) or PostgreSQL's
// timestamptz; NULL is the zero time.
func At(t *time.Time) any { return (*timeDest)(t) }

type timeDest time.Time

// LogIndex is the scan destination of a vpecs.log_index column: NULL
// leaves *logged false, an integer sets *logged and *index.
func LogIndex(logged *bool, index *uint64) any { return &logIndexDest{logged, index} }

type logIndexDest struct {
	logged *bool
	index  *uint64
}

// Scan implements sql.Scanner (which pgx honours too).
func (d *logIndexDest) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*d.logged, *d.index = false, 0
	case int64:
		if v < 0 {
			return fmt.Errorf("stored log_index %d is negative", v)
		}
		*d.logged, *d.index = true, uint64(v)
	default:
		return fmt.Errorf("stored log_index: unexpected %T", src)
	}
	return nil
}

// Scan implements sql.Scanner (which pgx honours too).
func (d *timeDest) Scan(src any) error {
	var t time.Time
	switch v := src.(type) {
	case nil:
	case time.Time:
		t = v
	case string:
		return d.parse(v)
	case []byte:
		return d.parse(string(v))
	default:
		return fmt.Errorf("stored time: unexpected %T", src)
	}
	*d = timeDest(t.UTC())
	return nil
}

func (d *timeDest) parse(s string) error {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("stored time %q: %w", s, err)
	}
	*d = timeDest(t.UTC())
	return nil
}

// JSONList is the scan destination of a list of strings kept as a JSON
// array in text (SQLite); a JSON null is an empty list.
func JSONList(dst *[]string) any { return (*jsonList)(dst) }

type jsonList []string

// Scan implements sql.Scanner.
func (l *jsonList) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		return fmt.Errorf("stored list: unexpected %T", src)
	}
	var out []string
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Errorf("stored list %q: %w", b, err)
	}
	*l = out
	return nil
}

// ListDest gives the scan destination of a list-of-strings column:
// JSONList for SQLite, the *[]string itself for PostgreSQL's text[].
type ListDest func(*[]string) any

// NonNil keeps a nil slice from being stored as NULL in a NOT NULL column.
func NonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// NonNilList is l, or an empty list for nil.
func NonNilList(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// Violation is the constraint a backend's error violates.
type Violation int

// Constraint violations MapErr maps.
const (
	NoViolation Violation = iota
	Unique                // a unique or primary key
	ForeignKey            // a reference to an absent organisation or run
)

// MapErr turns a backend's error into the store's sentinels, keeping its
// text: no rows is store.ErrNotFound, a unique violation store.ErrExists,
// a foreign-key violation store.ErrNotFound (the organisation or run the
// row refers to does not exist). Anything else is returned as it is.
func MapErr(err error, noRows bool, v Violation) error {
	switch {
	case err == nil:
		return nil
	case noRows:
		return store.ErrNotFound
	case v == Unique:
		return fmt.Errorf("%w (%v)", store.ErrExists, err)
	case v == ForeignKey:
		return fmt.Errorf("%w: the organisation or run it refers to does not exist (%v)", store.ErrNotFound, err)
	}
	return err
}

// Claim is ClaimSession's decision on the record id a session holds:
// done (nothing to write) when it holds recordID already, store.ErrConflict
// when it holds another; neither when it holds none.
func Claim(held sql.NullString, recordID string) (done bool, err error) {
	switch {
	case held.Valid && held.String == recordID:
		return true, nil
	case held.Valid:
		return false, fmt.Errorf("the session backs record %s: %w", held.String, store.ErrConflict)
	}
	return false, nil
}

// ClosedOn is CloseSession's answer for a session already closed on the
// commitment stored: nil for the same commitment (a retry),
// store.ErrConflict for another.
func ClosedOn(stored, commitmentHash string) error {
	if stored != commitmentHash {
		return fmt.Errorf("the session was closed on commitment %s: %w", stored, store.ErrConflict)
	}
	return nil
}
