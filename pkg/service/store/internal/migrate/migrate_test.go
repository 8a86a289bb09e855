package migrate

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoad(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	tests := []struct {
		name    string
		files   fstest.MapFS
		want    []string // version_name of each migration, in order
		wantErr string
	}{
		{"ordered by version", fstest.MapFS{
			"m/0002_b.sql": file("B"), "m/0001_a.sql": file("A"), "m/0010_c.sql": file("C"),
			"m/0003_x.sql": file("X"), "m/0004_y.sql": file("Y"), "m/0005_z.sql": file("Z"),
			"m/0006_q.sql": file("Q"), "m/0007_r.sql": file("R"), "m/0008_s.sql": file("S"),
			"m/0009_t.sql": file("T"), "m/README.md": file("not a migration"),
		}, []string{"1_a", "2_b", "3_x", "4_y", "5_z", "6_q", "7_r", "8_s", "9_t", "10_c"}, ""},
		{"gap", fstest.MapFS{"m/0001_a.sql": file("A"), "m/0003_c.sql": file("C")}, nil, "version 3"},
		{"duplicate", fstest.MapFS{"m/0001_a.sql": file("A"), "m/001_b.sql": file("B")}, nil, "where 2 was expected"},
		{"no name", fstest.MapFS{"m/0001.sql": file("A")}, nil, "want a name like"},
		{"not a number", fstest.MapFS{"m/init_a.sql": file("A")}, nil, "want a name like"},
		{"version 0", fstest.MapFS{"m/0000_a.sql": file("A")}, nil, "want a name like"},
		{"empty", fstest.MapFS{"m/README.md": file("x")}, nil, "none in m"},
		{"missing dir", fstest.MapFS{}, nil, "migrations:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := Load(tc.files, "m")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Load: err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range ms {
				got = append(got, fmt.Sprintf("%d_%s", m.Version, m.Name))
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("Load = %v, want %v", got, tc.want)
			}
			if ms[0].SQL != "A" {
				t.Errorf("first migration's SQL = %q", ms[0].SQL)
			}
		})
	}
}

// TestNext: the migration after the database's version, none once it is
// current, an error for a database newer than the binary.
func TestNext(t *testing.T) {
	ms := []Migration{{Version: 1, Name: "init"}, {Version: 2, Name: "more"}}
	tests := []struct {
		cur     int
		want    int // version of the migration returned, 0 for none
		wantErr bool
	}{
		{cur: 0, want: 1},
		{cur: 1, want: 2},
		{cur: 2},
		{cur: 3, wantErr: true},
	}
	for _, tc := range tests {
		m, err := Next(ms, tc.cur)
		got := 0
		if m != nil {
			got = m.Version
		}
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("Next(at %d) = version %d, %v; want version %d, error %v", tc.cur, got, err, tc.want, tc.wantErr)
		}
	}
}
