package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDepsCommands feeds arbitrary PR bodies and inputs to the image and deps
// subcommands through the workflow environment: no panic, and only exit 0 or 1.
func FuzzDepsCommands(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "pr-bodies", "*"))
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(string(data), "", "")
		}
	}
	f.Add("ci-sglang-pr: #1", "--x", "a b")
	f.Add("", "\r\n", "#")
	repo := f.TempDir() // an empty Miles checkout: no lockfile
	if err := os.Mkdir(filepath.Join(repo, "tests"), 0o755); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body, megatron, tag string) {
		vars := map[string]string{"PR_BODY": body, "INPUT_MEGATRON_PR": megatron, "INPUT_CI_IMAGE_TAG": tag, "PR_NUMBER": tag}
		for _, args := range [][]string{
			{"deps", "--backend", "cuda", "--repo", repo},
			{"deps", "--backend", "rocm", "--json"},
			{"image", "--backend", "cuda"},
			{"image", "--backend", "rocm", "--json"},
		} {
			var out, errb bytes.Buffer
			code := Run(args, Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }})
			if code != 0 && code != 1 {
				t.Fatalf("%v: wanted exit 0 or 1, got %d: %s", args, code, errb.String())
			}
			if code == 1 && !bytes.HasPrefix(errb.Bytes(), []byte("::")) {
				t.Fatalf("%v: wanted an annotation on stderr, got %q", args, errb.String())
			}
		}
	})
}
