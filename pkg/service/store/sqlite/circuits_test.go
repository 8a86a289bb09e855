package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/storetest"
)

func TestCircuits(t *testing.T) {
	storetest.RunCircuits(t, func(t *testing.T) store.CircuitStore {
		return openTemp(t, filepath.Join(t.TempDir(), "svc.db"))
	})
}
