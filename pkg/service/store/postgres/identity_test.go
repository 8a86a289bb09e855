package postgres

import (
	"os"
	"testing"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/storetest"
)

func TestIdentity(t *testing.T) {
	if os.Getenv(dsnEnv) == "" {
		t.Skipf("%s is not set: run scripts/postgres.sh start and export the line it prints to test the PostgreSQL store", dsnEnv)
	}
	storetest.RunIdentity(t, func(t *testing.T) store.IdentityStore {
		return openDSN(t, testSchema(t))
	})
}
