package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/storetest"
)

func TestWebConformance(t *testing.T) {
	storetest.RunWeb(t, func(t *testing.T) store.Store {
		return openTemp(t, filepath.Join(t.TempDir(), "svc.db"))
	})
}
