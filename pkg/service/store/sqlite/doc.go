// Package sqlite implements store.Store (every role) on an embedded SQLite database
// (modernc.org/sqlite: pure Go, no cgo).
//
// # Connections
//
// A DB holds two connection pools on the same file:
//
//   - a writer pool of exactly one connection, used (once Open has
//     migrated the database) by one writer goroutine only: every write
//     method queues its write to it, in Go, honouring its context, instead
//     of contending for SQLite's lock. Its transactions start with BEGIN
//     IMMEDIATE, which takes the write lock before the first read: a
//     transaction never has to upgrade a read lock, the one case where
//     SQLite returns SQLITE_BUSY at once without waiting.
//   - a reader pool of several query_only connections. In WAL mode readers
//     never block the writer and the writer never blocks readers.
//
// # Group commit
//
// The writer goroutine commits writes in batches: it takes every write
// waiting (up to MaxBatch), runs them in one transaction, each in a
// SAVEPOINT of its own so that a failing write (store.ErrSealed,
// store.ErrConflict, a constraint...) rolls back only itself, commits once
// (one WAL fsync for the whole batch) and only then answers every caller.
// No caller is told its write succeeded before the commit that holds it is
// durable; if the commit fails, every write of the batch fails with it.
// Writes in one batch are applied in the order taken, each seeing the
// previous ones: the outcome is that of running them one after another, as
// before. A lone write is committed at once: batches form only while the
// previous commit is under way, so nothing waits for a timer.
//
// A caller whose context ends while its write is still queued gets
// ctx.Err() and its write is dropped. If the context ends after the write
// ran but before its batch committed, the caller gets ctx.Err() at once
// and the write still commits: as with a response lost on the network, the
// caller cannot tell, and a retry of AppendRecord reports duplicate=true.
//
// Several processes may open the same file (svc admin beside svc serve):
// between processes the write lock is SQLite's own, and busy_timeout (5 s)
// makes a writer wait for another process's transaction to commit rather
// than fail.
//
// # Durability
//
// The database is in WAL mode with synchronous=FULL: the WAL is fsynced on
// every commit, so every write is durable when its method returns, as the
// store.Store contract requires. (With synchronous=NORMAL, the usual WAL
// setting, the last commits before a power loss can be rolled back:
// acknowledged records and issued VPECs would vanish.) foreign_keys is on.
//
// # Representation
//
// Timestamps are stored as UTC text in the fixed-width layout
// 2006-01-02T15:04:05.000000000Z: nanoseconds are kept, and text order is
// time order. Bodies are BLOBs holding the exact bytes given. Records are
// rows in arrival order (the records of one commit share the table's last
// pages), found through unique indexes on (run_id, sequence) and
// (record_id, run_id) (migration 0010).
//
// # Migrations
//
// The schema is versioned by the embedded migrations/NNNN_name.sql files and
// the schema_migrations table. Open applies the missing ones in order, one
// transaction each, under the write lock, so two processes opening a new
// file at once apply each migration exactly once. Open refuses a database
// whose schema is newer than this binary knows.
package sqlite
