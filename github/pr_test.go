package github

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNameStatus(t *testing.T) {
	tests := []struct {
		name  string
		files []File
		want  string // NULs shown as |
		err   string
	}{
		{name: "statuses", files: []File{
			{Status: "added", Path: "a.py", Changes: 3},
			{Status: "removed", Path: "b.py", Changes: 3},
			{Status: "modified", Path: "c.py", Changes: 1},
			{Status: "changed", Path: "d.sh"},
			{Status: "renamed", Path: "new.py", PreviousPath: "old.py"},
			{Status: "renamed", Path: "new2.py", PreviousPath: "old2.py", Changes: 4},
			{Status: "copied", Path: "copy.py", PreviousPath: "orig.py"},
		}, want: "A|a.py|D|b.py|M|c.py|M|d.sh|R100|old.py|new.py|R050|old2.py|new2.py|C100|orig.py|copy.py|"},
		{name: "path with a newline", files: []File{{Status: "added", Path: "docs/a\nb.md"}}, want: "A|docs/a\nb.md|"},
		{name: "no files", files: []File{}, want: ""},
		{name: "unknown status", files: []File{{Status: "unchanged", Path: "x.py"}}, err: `file 1 ("x.py"): unknown status "unchanged"`},
		{name: "rename without its old path", files: []File{{Status: "renamed", Path: "x.py"}}, err: "file 1 (renamed): a path is empty"},
		{name: "NUL in a path", files: []File{{Status: "modified", Path: "x\x00M\x00y.py"}}, err: `file 1 (modified): the path "x\x00M\x00y.py" holds a NUL byte`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := NameStatus(tt.files)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("wanted error %q, got %v", tt.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.ReplaceAll(string(data), "\x00", "|"); got != tt.want {
				t.Errorf("wanted %q, got %q", tt.want, got)
			}
		})
	}
}

func TestParseRepoAndNumber(t *testing.T) {
	for _, ok := range []string{"radixark/miles", "sgl-project/sglang", "radixark/Megatron-LM", "a/b.c_d"} {
		if _, _, err := ParseRepo(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "miles", "a/b/c", "-a/b", "a/..", "a/b?x", "../x"} {
		if _, _, err := ParseRepo(bad); err == nil {
			t.Errorf("wanted %q refused", bad)
		}
	}
	for in, want := range map[string]int{"2874": 2874, "#82": 82} {
		if n, err := ParseNumber(in); err != nil || n != want {
			t.Errorf("%s: wanted %d, got %d, %v", in, want, n, err)
		}
	}
	for _, bad := range []string{"", "0", "-1", "12a", "#", "99999999999"} {
		if _, err := ParseNumber(bad); err == nil {
			t.Errorf("wanted %q refused", bad)
		}
	}
	if _, err := ParseNumber("x"); err == nil || err.Error() != `--pr "x" is not a pull request number; give the number, e.g. --pr 2874` {
		t.Errorf("wanted the --pr error, got %v", err)
	}
}

func TestReadEvent(t *testing.T) {
	p, err := ReadEvent(filepath.Join(fixtures, "events", "pull_request.json"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Ref() != "radixark/miles#2874" || p.Fork || p.Source != "event" || p.Files != nil || p.ChangedFiles != 250 ||
		strings.Join(p.Labels, ",") != "run-ci-megatron,documentation" || p.ShortSHA() != "5f1d0c7e2b9a" {
		t.Errorf("wanted PR 2874 from the payload, got %+v", p)
	}
	if p.MergeSHA != "9c1e5b7a3d2f4e6a8b0c1d3e5f7a9b2c4d6e8f01" || p.BaseRef != "main" {
		t.Errorf("wanted the merge commit and base of the payload, got %q into %q", p.MergeSHA, p.BaseRef)
	}
	if _, why := p.NameStatus(); why != "the changed files of radixark/miles#2874 were not fetched" {
		t.Errorf("wanted the payload to carry no diff, got %q", why)
	}
	fork, err := ReadEvent(filepath.Join(fixtures, "events", "pull_request_fork.json"))
	if err != nil || !fork.Fork || fork.Number != 2901 {
		t.Errorf("wanted fork PR 2901, got %+v, %v", fork, err)
	}
	none, err := ReadEvent(filepath.Join(fixtures, "events", "schedule.json"))
	if err != nil || none != nil {
		t.Errorf("wanted no PR from a schedule payload, got %+v, %v", none, err)
	}
}

func TestReadEventErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct{ name, path, want string }{
		{"not JSON", write("bad.json", "{"), "GITHUB_EVENT_PATH " + dir + "/bad.json: the event payload is not JSON: unexpected end of JSON input; GITHUB_EVENT_PATH must name the file GitHub Actions wrote"},
		{"no number", write("nonum.json", `{"pull_request":{"base":{"repo":{"full_name":"a/b"}}}}`), "GITHUB_EVENT_PATH " + dir + "/nonum.json: the event payload's pull_request has no number; GITHUB_EVENT_PATH must name the file GitHub Actions wrote"},
		{"no repository", write("norepo.json", `{"number":3,"pull_request":{}}`), "GITHUB_EVENT_PATH " + dir + `/norepo.json: the event payload names no base repository (""); GITHUB_EVENT_PATH must name the file GitHub Actions wrote`},
		{"bad head", write("sha.json", `{"number":3,"pull_request":{"head":{"sha":"--upload-pack=x"},"base":{"repo":{"full_name":"a/b"}}}}`), "GITHUB_EVENT_PATH " + dir + `/sha.json: a/b#3: head SHA "--upload-pack=x" is not a commit id`},
		{"a folder", dir, "GITHUB_EVENT_PATH " + dir + " is a folder, not a regular file; it must name the file GitHub Actions wrote"},
		{"a device", "/dev/zero", "GITHUB_EVENT_PATH /dev/zero is a device, not a regular file; it must name the file GitHub Actions wrote"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadEvent(tt.path)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("wanted %q, got %v", tt.want, err)
			}
		})
	}
}
