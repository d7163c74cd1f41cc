package github

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	gh "github.com/google/go-github/v62/github"
	"github.com/radixark/miles-ci/policy"
)

// FuzzParseEvent: any payload is parsed or refused, never a panic, and a
// parsed PR always has a number and a valid repository.
func FuzzParseEvent(f *testing.F) {
	for _, name := range []string{"pull_request.json", "pull_request_fork.json", "schedule.json"} {
		data, err := os.ReadFile(filepath.Join(fixtures, "events", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"number":1,"pull_request":{"body":null,"head":{"repo":null},"base":{"repo":{"full_name":"a/b"}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseEvent(data)
		if err != nil || p == nil {
			return
		}
		if p.Number <= 0 {
			t.Fatalf("parsed a PR without a number: %+v", p)
		}
		if _, _, err := ParseRepo(p.Repo); err != nil {
			t.Fatalf("parsed a PR of an invalid repository: %v", err)
		}
	})
}

// FuzzFilesPage: any page of changed files either renders to a diff that
// rules §4's parser reads back entry for entry, or is refused.
func FuzzFilesPage(f *testing.F) {
	f.Add([]byte(`[{"filename":"a.py","status":"modified","changes":1},{"filename":"b.py","previous_filename":"c.py","status":"renamed"}]`))
	f.Add([]byte(`[{"filename":"x\u0000M\u0000y","status":"added"}]`))
	f.Add([]byte(`[{"filename":"","status":"removed"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var page []*gh.CommitFile
		if json.Unmarshal(data, &page) != nil {
			return
		}
		files := make([]File, 0, len(page))
		for _, cf := range page {
			if cf == nil {
				cf = &gh.CommitFile{}
			}
			files = append(files, fileFromAPI(cf))
		}
		diff, err := NameStatus(files)
		if err != nil || len(files) == 0 {
			return
		}
		entries, err := policy.ParseNameStatus(diff)
		if err != nil {
			// Only a path that is not UTF-8 may be refused here: rules §4 fails open on it.
			return
		}
		if len(entries) != len(files) {
			t.Fatalf("%d files rendered to %d entries", len(files), len(entries))
		}
		for i, e := range entries {
			if last := e.Paths[len(e.Paths)-1]; last != files[i].Path {
				t.Fatalf("entry %d: wanted path %q, got %q", i, files[i].Path, last)
			}
		}
	})
}
