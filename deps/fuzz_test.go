package deps

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/policy"
)

// addBodies seeds a fuzz corpus with the testdata PR bodies.
func addBodies(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "testdata", "pr-bodies", "*"))
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(string(data))
		}
	}
	f.Add("ci-sglang-pr: #1\r\nci-sglang-pr:\t\vx\n ci-megatron-pr: y\nci-megatron-pr: a..b")
	f.Add("ci-image-tag: \xff\xfe\nci-sglang-pr: \x00")
}

// FuzzFindDirectives checks the PR-body reader never panics and that what it
// returns is what the workflows' grep would print.
func FuzzFindDirectives(f *testing.F) {
	addBodies(f)
	f.Fuzz(func(t *testing.T, body string) {
		lines := strings.Split(body, "\n")
		for _, key := range []string{KeySGLang, KeyMegatron, KeyImageTag} {
			prev := 0
			for _, d := range FindDirectives(body, key) {
				if d.Line <= prev || d.Line > len(lines) {
					t.Fatalf("line %d out of order or range (previous %d, %d lines)", d.Line, prev, len(lines))
				}
				prev = d.Line
				if d.Value == "" || strings.ContainsAny(d.Value, " \t\n\v\f\r") {
					t.Fatalf("value %q is empty or holds a blank", d.Value)
				}
				if !strings.HasPrefix(lines[d.Line-1], key+":") || !strings.Contains(lines[d.Line-1], d.Value) {
					t.Fatalf("line %d %q does not hold %s: %s", d.Line, lines[d.Line-1], key, d.Value)
				}
			}
		}
		for _, b := range []policy.Backend{policy.CPU, policy.CUDA, policy.ROCM} {
			d, err := Resolve(Inputs{Backend: b, PRBody: body})
			if err != nil {
				continue
			}
			for _, r := range []Ref{d.SGLang, d.Megatron} {
				if r.Source != FromBaked && CheckPin(r.Ref) != nil {
					t.Fatalf("resolved an invalid pin %q", r.Ref)
				}
			}
		}
		_, _ = ResolveImage(ImageInputs{Backend: policy.CUDA, PRBody: body})
	})
}

// FuzzParseLock checks the lockfile parser never panics and that whatever it
// accepts formats and parses back to the same lock.
func FuzzParseLock(f *testing.F) {
	f.Add([]byte(validLockJSON))
	if data, err := os.ReadFile(filepath.Join("..", "testdata", LockFileName)); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"release_branch": 1, "release_branch": [], "x": {"y": null}}`))
	f.Add([]byte(`[`))
	f.Add([]byte(`{"a":"\ud800"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lock, err := ParseLock("release-lock.json", data)
		if err != nil {
			return
		}
		out, err := lock.Format()
		if err != nil {
			t.Fatalf("accepted lock does not format: %v", err)
		}
		again, err := ParseLock("release-lock.json", out)
		if err != nil || again != lock {
			t.Fatalf("round trip: wanted %+v, got %+v (%v)", lock, again, err)
		}
	})
}

// FuzzCheckPin checks that every accepted pin is safe to hand to git fetch.
func FuzzCheckPin(f *testing.F) {
	for _, s := range []string{"#1", "sglang-miles", "a..b", "-x", "a/.b", "x.lock", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if CheckPin(s) != nil {
			return
		}
		if strings.HasPrefix(s, "-") || strings.Contains(s, "..") || strings.ContainsAny(s, " \t\n:~^?*[\\@{") {
			t.Fatalf("accepted unsafe pin %q", s)
		}
	})
}
