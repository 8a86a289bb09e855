package backend

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

// TestAt: a timestamp column reads the same instant, in UTC, from either
// backend's form; NULL is the zero time; anything else is an error.
func TestAt(t *testing.T) {
	want := time.Date(2025, 3, 14, 15, 9, 26, 535897000, time.UTC)
	cet := want.In(time.FixedZone("CET", 3600))
	tests := []struct {
		name    string
		src     any
		want    time.Time
		wantErr bool
	}{
		{"sqlite text", "2025-03-14T15:09:26.535897000Z", want, false},
		{"sqlite bytes", []byte("2025-03-14T15:09:26.535897000Z"), want, false},
		{"postgres timestamptz", cet, want, false},
		{"null", nil, time.Time{}, false},
		{"not a time", "yesterday", time.Time{}, true},
		{"a number", int64(3), time.Time{}, true},
	}
	for _, tc := range tests {
		got := time.Unix(1, 0)
		err := At(&got).(interface{ Scan(any) error }).Scan(tc.src)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err = %v, want error %v", tc.name, err, tc.wantErr)
			continue
		}
		if err == nil && (!got.Equal(tc.want) || got.Location() != time.UTC) {
			t.Errorf("%s: %v, want %v in UTC", tc.name, got, tc.want)
		}
	}
}

// TestJSONList: SQLite's JSON arrays read as lists; null as none.
func TestJSONList(t *testing.T) {
	tests := []struct {
		src     any
		want    []string
		wantErr bool
	}{
		{`["a","b"]`, []string{"a", "b"}, false},
		{[]byte(`[]`), []string{}, false},
		{`null`, nil, false},
		{`{"a":1}`, nil, true},
		{nil, nil, true},
	}
	for _, tc := range tests {
		var got []string
		err := JSONList(&got).(interface{ Scan(any) error }).Scan(tc.src)
		if (err != nil) != tc.wantErr || (err == nil && !slices.Equal(got, tc.want)) {
			t.Errorf("JSONList(%v) = %q, %v; want %q, error %v", tc.src, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestMapErr: no rows and constraint violations map to the store's
// sentinels; other errors stay as they are.
func TestMapErr(t *testing.T) {
	other := errors.New("disk I/O error")
	tests := []struct {
		name   string
		err    error
		noRows bool
		v      Violation
		want   error
	}{
		{"nil", nil, false, NoViolation, nil},
		{"no rows", other, true, NoViolation, store.ErrNotFound},
		{"unique", other, false, Unique, store.ErrExists},
		{"foreign key", other, false, ForeignKey, store.ErrNotFound},
		{"other", other, false, NoViolation, other},
	}
	for _, tc := range tests {
		got := MapErr(tc.err, tc.noRows, tc.v)
		if (tc.want == nil) != (got == nil) || (tc.want != nil && !errors.Is(got, tc.want)) {
			t.Errorf("%s: MapErr = %v, want %v", tc.name, got, tc.want)
		}
	}
}
