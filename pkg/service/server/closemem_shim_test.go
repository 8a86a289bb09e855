package server_test

import (
	"context"

	"github.com/svc-gov/svc/pkg/service/store"
)

// appendRaw stores a record directly (no limits: a benchmark fixture).
func appendRaw(ctx context.Context, st store.RunWriter, orgID string, r store.Record) error {
	_, err := st.AppendRecord(ctx, orgID, r, store.Limits{})
	return err
}
