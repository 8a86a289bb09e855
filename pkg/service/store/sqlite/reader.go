package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// readStmts keeps the read queries prepared on the reader pool, each
// prepared on first use. modernc's driver parses a query again on every
// unprepared call, which costs about as much as running it, and the
// service runs a few reads for every record it accepts; a prepared
// statement is kept by database/sql per connection and only reset between
// uses.
type readStmts struct {
	pool *sql.DB
	mu   sync.Mutex
	m    map[string]*sql.Stmt
}

// get returns query prepared on the pool.
func (c *readStmts) get(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	s, ok := c.m[query]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	s, err := c.pool.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[query]; ok { // prepared meanwhile by another caller
		s.Close()
		return old, nil
	}
	if c.m == nil {
		c.m = make(map[string]*sql.Stmt)
	}
	c.m[query] = s
	return s, nil
}

func (c *readStmts) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for q, s := range c.m {
		errs = append(errs, s.Close())
		delete(c.m, q)
	}
	return errors.Join(errs...)
}

// queryRow runs a read query returning at most one row on the reader pool,
// prepared.
func (db *DB) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	s, err := db.reads.get(ctx, query)
	if err != nil {
		// The unprepared query reports the error (a context ended, a
		// table missing...) through the Row.
		return db.r.QueryRowContext(ctx, query, args...)
	}
	return s.QueryRowContext(ctx, args...)
}

// query runs a read query on the reader pool, prepared.
func (db *DB) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := db.reads.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(ctx, args...)
}
