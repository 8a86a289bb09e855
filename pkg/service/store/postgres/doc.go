// Package postgres implements store.Store (every role) on PostgreSQL (pgx v5, pgxpool),
// for several svc servers sharing one database.
//
// # Concurrency
//
// Every multi-statement write is one READ COMMITTED transaction (set
// explicitly, whatever the server's default). AppendRecord, SealRecords,
// StoreVPEC and SealRun first lock the run's row with SELECT ... FOR
// UPDATE, so across all processes the appends to one run (which update its
// metadata columns) and its seal are serialised: an append either commits
// before the seal, and is in the sealed record set, or sees the run sealed,
// and of two concurrent seals the second sees the first's.
// CreateSession and CloseSession take the run's row FOR SHARE: they do not
// wait for each other, but exclude the seal in the same way. Of concurrent
// closes of one session, the first UPDATE wins and the others, having
// waited for it, compare their commitment hash with the stored one.
// Unique constraints back this up; a unique violation (SQLSTATE 23505) maps
// to store.ErrExists, or to store.ErrConflict / store.ErrSealed where the
// interface says so, and a foreign-key violation (23503: an unknown
// organisation) to store.ErrNotFound.
//
// # Durability
//
// Sessions run with synchronous_commit=on (unless the DSN sets it): a
// commit returns after its WAL is flushed, so every write is durable when
// its method returns.
//
// # Representation
//
// Timestamps are timestamptz, which keeps microseconds: nanoseconds are
// truncated, and times are returned in UTC. Bodies are bytea, byte-exact.
// Tables live in the first schema of the connection's search_path (set it
// in the DSN, e.g. ?search_path=svc, to share a database).
//
// # Migrations
//
// The schema is versioned by the embedded migrations/NNNN_name.sql files
// and the schema_migrations table. Open applies the missing ones in order,
// one transaction each, holding a transaction-scoped advisory lock, so
// servers starting together apply each migration exactly once. Open
// refuses a database whose schema is newer than this binary knows.
package postgres
