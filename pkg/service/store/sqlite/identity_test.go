package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/storetest"
)

func TestIdentity(t *testing.T) {
	storetest.RunIdentity(t, func(t *testing.T) store.IdentityStore {
		return openTemp(t, filepath.Join(t.TempDir(), "svc.db"))
	})
}
