package policy

import (
	"slices"
	"testing"
)

func TestAssignShards(t *testing.T) {
	mk := func(pairs ...any) []Registration {
		var out []Registration
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, Registration{File: pairs[i].(string), EstTime: pairs[i+1].(float64)})
		}
		return out
	}
	names := func(rs []Registration) []string {
		out := []string{}
		for _, r := range rs {
			out = append(out, r.File)
		}
		return out
	}
	tests := []struct {
		name  string
		tests []Registration
		n     int
		want  [][]string
	}{
		{"greedy by est_time", mk("a", 100.0, "b", 300.0, "c", 200.0, "d", 50.0), 2,
			[][]string{{"b", "d"}, {"c", "a"}}},
		{"ties broken by file name", mk("z", 10.0, "y", 10.0, "x", 10.0), 2,
			[][]string{{"x", "z"}, {"y"}}},
		{"lowest index on equal totals", mk("a", 5.0, "b", 5.0), 3,
			[][]string{{"a"}, {"b"}, {}}},
		{"more shards than tests", mk("a", 1.0), 4, [][]string{{"a"}, {}, {}, {}}},
		{"same file twice is stable", mk("a", 7.0, "a", 7.0, "b", 7.0), 1, [][]string{{"a", "a", "b"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := AssignShards(tc.tests, tc.n)
			if len(got) != len(tc.want) {
				t.Fatalf("wanted %d shards, got %d", len(tc.want), len(got))
			}
			for i := range got {
				if g := names(got[i]); !slices.Equal(g, tc.want[i]) {
					t.Errorf("shard %d: wanted %v, got %v", i, tc.want[i], g)
				}
			}
		})
	}
}

func TestPartitionValidate(t *testing.T) {
	tests := []struct {
		p    Partition
		want string
	}{
		{Partition{ID: 0, Size: 1}, ""},
		{Partition{ID: 3, Size: 4}, ""},
		{Partition{ID: 4, Size: 4}, "--auto-partition-id must be in range [0, 4), but got 4"},
		{Partition{ID: -1, Size: 2}, "--auto-partition-id must be in range [0, 2), but got -1"},
		{Partition{ID: 0, Size: 0}, "--auto-partition-size must be positive (got 0)"},
		{Partition{ID: 0, Size: 256}, ""},
		{Partition{ID: 0, Size: 257}, "--auto-partition-size must be at most 256 (got 257): GitHub Actions runs at most 256 jobs from one matrix"},
	}
	for _, tc := range tests {
		err := tc.p.Validate()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%+v: wanted %q, got %q", tc.p, tc.want, got)
		}
	}
}
