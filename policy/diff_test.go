package policy

import (
	"reflect"
	"testing"
)

func TestParseNameStatus(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []DiffEntry
		wantErr string
	}{
		{name: "modify and add", in: "M\x00a.py\x00A\x00docs/x.md\x00",
			want: []DiffEntry{{Status: "M", Paths: []string{"a.py"}}, {Status: "A", Paths: []string{"docs/x.md"}}}},
		{name: "rename carries two paths", in: "R100\x00old.py\x00new.py\x00",
			want: []DiffEntry{{Status: "R100", Paths: []string{"old.py", "new.py"}}}},
		{name: "copy with one digit", in: "C7\x00a\x00b\x00", want: []DiffEntry{{Status: "C7", Paths: []string{"a", "b"}}}},
		{name: "path with newline", in: "M\x00we\nird.py\x00", want: []DiffEntry{{Status: "M", Paths: []string{"we\nird.py"}}}},
		{name: "every single status", in: "A\x00a\x00D\x00d\x00M\x00m\x00T\x00t\x00U\x00u\x00X\x00x\x00B\x00b\x00",
			want: []DiffEntry{{"A", []string{"a"}}, {"D", []string{"d"}}, {"M", []string{"m"}}, {"T", []string{"t"}}, {"U", []string{"u"}}, {"X", []string{"x"}}, {"B", []string{"b"}}}},
		{name: "empty", in: "", wantErr: "the diff is empty"},
		{name: "not NUL-terminated", in: "M\x00a.py", wantErr: "the diff is not NUL-terminated; produce it with git diff --name-status -z -M"},
		{name: "newline separated", in: "M\ta.py\n", wantErr: "the diff is not NUL-terminated; produce it with git diff --name-status -z -M"},
		{name: "not utf-8", in: "M\x00\xff.py\x00", wantErr: "the diff is not valid UTF-8"},
		{name: "unknown status", in: "Q\x00a\x00", wantErr: `entry 1: unknown status "Q"`},
		{name: "R without score", in: "R\x00a\x00b\x00", wantErr: `entry 1: unknown status "R"`},
		{name: "R with four digits", in: "R1000\x00a\x00b\x00", wantErr: `entry 1: unknown status "R1000"`},
		{name: "M with score", in: "M100\x00a\x00", wantErr: `entry 1: unknown status "M100"`},
		{name: "rename missing new path", in: "R100\x00a\x00", wantErr: "entry 1 (R100): a path is missing"},
		{name: "status without path", in: "M\x00", wantErr: "entry 1 (M): a path is missing"},
		{name: "empty path", in: "M\x00\x00", wantErr: "entry 1 (M): a path is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseNameStatus([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("wanted error %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("wanted %q, got %q", tc.want, got)
			}
		})
	}
}

func FuzzParseNameStatus(f *testing.F) {
	for _, s := range []string{"M\x00a.py\x00", "R100\x00a\x00b\x00", "", "M", "\x00", "C1\x00\x00\x00", "A\x00docs/\xff\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := ParseNameStatus(data)
		if err != nil {
			return
		}
		for _, e := range entries {
			n, ok := statusPaths(e.Status)
			if !ok || len(e.Paths) != n {
				t.Fatalf("accepted entry %q with %d paths", e.Status, len(e.Paths))
			}
			for _, p := range e.Paths {
				if p == "" {
					t.Fatal("accepted an empty path")
				}
			}
		}
	})
}
