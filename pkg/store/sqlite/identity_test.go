package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/pkg/store"
	"github.com/svc-gov/svc/pkg/store/storetest"
)

func TestIdentity(t *testing.T) {
	storetest.RunIdentity(t, func(t *testing.T) store.IdentityStore {
		return openTemp(t, filepath.Join(t.TempDir(), "svc.db"))
	})
}
