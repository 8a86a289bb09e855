package postgres

import (
	"os"
	"testing"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/storetest"
)

func TestCircuits(t *testing.T) {
	if os.Getenv(dsnEnv) == "" {
		t.Skipf("%s is not set: run scripts/postgres.sh start and export the line it prints to test the PostgreSQL store", dsnEnv)
	}
	storetest.RunCircuits(t, func(t *testing.T) store.CircuitStore {
		return openDSN(t, testSchema(t))
	})
}
