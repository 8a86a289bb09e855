package dashboard_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/service/dashboard"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/store"
)

// TestVPECPageReceipt: the VPEC page passes the receipt Config.Receipts
// gives to the transparency check (a receipt and no log key in the
// service's trust material: UNVERIFIED — LOG KEY MISSING, named on the
// page), reports the check not applicable without a receipt, and answers
// 500 when the receipt store fails rather than showing a page that did
// not check it.
func TestVPECPageReceipt(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.seed()
	storeErr := errors.New("receipt store down")
	for _, c := range []struct {
		name     string
		receipts func(context.Context, store.VPEC) ([]byte, error)
		code     int
		want     string
	}{
		{"no receipt store", nil, http.StatusOK, "no transparency log receipt given"},
		{"no receipt yet", func(context.Context, store.VPEC) ([]byte, error) { return nil, nil }, http.StatusOK, "no transparency log receipt given"},
		{"a receipt", func(_ context.Context, v store.VPEC) ([]byte, error) {
			if v.ID != e.vpecID {
				t.Errorf("receipt asked for %s, page of %s", v.ID, e.vpecID)
			}
			return []byte(`{"schema":"svc.tlog.receipt/v1"}`), nil
		}, http.StatusOK, "LOG KEY MISSING"},
		{"the store fails", func(context.Context, store.VPEC) ([]byte, error) { return nil, storeErr }, http.StatusInternalServerError, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := dashboard.New(dashboard.Config{Storage: e.storage(), Trust: e.mat.Trust, Signer: e.mat.Signer, Timestamper: e.mat.TSA,
				AuthKey: func(ctx context.Context, key string) (store.APIKey, error) {
					return e.st.APIKeyByHash(ctx, server.HashKey(key))
				},
				RequestCalibration: func(context.Context, store.APIKey, api.CalibrationRequestInput) (api.CalibrationRequestView, error) {
					return api.CalibrationRequestView{}, errors.New("not in this test")
				},
				Receipts: c.receipts})
			if err != nil {
				t.Fatal(err)
			}
			mux := http.NewServeMux()
			d.Register(func(p string, h http.Handler) { mux.Handle(p, h) })
			e.ts = httptest.NewServer(mux)
			defer e.ts.Close()
			a := e.signIn(e.keyA)
			body := e.get(a, "/dashboard/vpecs/"+e.vpecID, c.code)
			if c.want != "" && !strings.Contains(body, c.want) {
				t.Errorf("page does not say %q", c.want)
			}
		})
	}
}
