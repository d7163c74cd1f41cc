package stagerun_test

import (
	"strings"
	"testing"

	. "github.com/radixark/miles-ci/stagerun"
)

func TestParseLsRemote(t *testing.T) {
	a, b, c := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)
	for _, tc := range []struct {
		name, out, fetch, want string
		ok                     bool
		err                    string
	}{
		{"branch", a + "\trefs/heads/miles-main\n", "miles-main", a, true, ""},
		{"tag wins over branch, peeled", a + "\trefs/heads/v1\n" + b + "\trefs/tags/v1\n" + c + "\trefs/tags/v1^{}\n", "v1", c, true, ""},
		{"exact ref", a + "\trefs/pull/7/head\n", "refs/pull/7/head", a, true, ""},
		{"a longer name that only ends the same", a + "\trefs/heads/x/miles-main\n", "miles-main", "", false, ""},
		{"remote HEAD", a + "\trefs/remotes/origin/HEAD\n", "origin", a, true, ""},
		{"nothing", "", "gone", "", false, ""},
		{"sha-256 repository", strings.Repeat("d", 64) + "\trefs/heads/main\n", "main", strings.Repeat("d", 64), true, ""},
		{"garbage", "fatal: not a repo\n", "main", "", false, `git ls-remote printed "fatal: not a repo", not "<commit>\t<ref>"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := ParseLsRemote(tc.out, tc.fetch)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("wanted %q, got %v", tc.err, err)
				}
				return
			}
			if err != nil || got != tc.want || ok != tc.ok {
				t.Errorf("wanted %q %t, got %q %t (err %v)", tc.want, tc.ok, got, ok, err)
			}
		})
	}
}

func FuzzParseLsRemote(f *testing.F) {
	f.Add(strings.Repeat("a", 40)+"\trefs/heads/main\n", "main")
	f.Add("x\ty\n\n", "")
	f.Fuzz(func(t *testing.T, out, fetch string) {
		sha, ok, err := ParseLsRemote(out, fetch)
		if ok && (err != nil || (len(sha) != 40 && len(sha) != 64)) {
			t.Fatalf("ok with %q, %v", sha, err)
		}
	})
}
