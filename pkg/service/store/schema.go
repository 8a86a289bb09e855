package store

import (
	"errors"
	"fmt"
)

// ErrSchemaTooNew: the database was migrated by a newer svc than this one.
// Opening it is refused, never attempted: this binary does not know what
// the newer migrations changed, so it could misread or damage what they
// wrote. The error is also a *SchemaTooNewError naming both versions.
var ErrSchemaTooNew = errors.New("database schema is newer than this svc")

// SchemaTooNewError is the error of opening a database whose schema
// version is higher than the highest one this binary's migrations reach.
// It matches ErrSchemaTooNew with errors.Is.
type SchemaTooNewError struct {
	// Database is the schema version recorded in the database
	// (schema_migrations).
	Database int
	// Binary is the highest schema version this binary knows.
	Binary int
}

func (e *SchemaTooNewError) Error() string {
	return fmt.Sprintf("the database schema is at version %d but this svc knows versions up to %d: it was migrated by a newer svc; run that version (or newer), or restore a backup made before the upgrade", e.Database, e.Binary)
}

// Is makes a *SchemaTooNewError match ErrSchemaTooNew.
func (e *SchemaTooNewError) Is(target error) bool { return target == ErrSchemaTooNew }
