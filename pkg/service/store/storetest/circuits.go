package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

// RunCircuits tests a store's circuit registry (store.CircuitStore):
// immutable entries by circuit id, and the latest mlp_head entry by model.
func RunCircuits(t *testing.T, open func(t *testing.T) store.CircuitStore) {
	ctx := context.Background()
	st := open(t)
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	model := "sha256:" + hex64('a')
	cond := store.Circuit{ID: "sha256:" + hex64('1'), Circuit: "threshold_check", Body: []byte(`{"c":1}`), PublishedAt: t0}
	head1 := store.Circuit{ID: "sha256:" + hex64('2'), Circuit: "mlp_head", ModelHash: model, Body: []byte(`{"c":2}`), PublishedAt: t0}
	head2 := store.Circuit{ID: "sha256:" + hex64('3'), Circuit: "mlp_head", ModelHash: model, Body: []byte(`{"c":3}`), PublishedAt: t0.Add(time.Hour)}
	if _, err := st.CircuitByModelHash(ctx, model); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("empty registry: %v, want ErrNotFound", err)
	}
	for _, c := range []store.Circuit{cond, head2, head1} {
		if err := st.PutCircuit(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.PutCircuit(ctx, store.Circuit{ID: cond.ID, Circuit: "threshold_check", Body: []byte(`{}`), PublishedAt: t0}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("second entry under one id: %v, want ErrExists", err)
	}
	got, err := st.CircuitByID(ctx, cond.ID)
	if err != nil || string(got.Body) != `{"c":1}` || got.Circuit != "threshold_check" || got.ModelHash != "" || !got.PublishedAt.Equal(t0) {
		t.Fatalf("CircuitByID: %+v %v", got, err)
	}
	// The entry published last wins, whatever the insertion order.
	if got, err := st.CircuitByModelHash(ctx, model); err != nil || got.ID != head2.ID {
		t.Fatalf("CircuitByModelHash: %+v %v, want %s", got, err, head2.ID)
	}
	if _, err := st.CircuitByModelHash(ctx, ""); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("condition circuits have no model: %v", err)
	}
	if _, err := st.CircuitByID(ctx, "sha256:"+hex64('f')); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
}

func hex64(c byte) string {
	b := make([]byte, 64)
	for i := range b {
		b[i] = c
	}
	return string(b)
}
