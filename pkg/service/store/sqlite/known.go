package sqlite

import "github.com/svc-gov/svc/pkg/service/store/internal/migrate"

// KnownSchemaVersion returns the highest schema version this binary's
// migrations reach: a database (or a backup of one) at a higher version
// was made by a newer svc and is refused (store.ErrSchemaTooNew).
func KnownSchemaVersion() int {
	ms, err := migrate.Load(migrationsFS, "migrations")
	if err != nil {
		return 0
	}
	return len(ms)
}
