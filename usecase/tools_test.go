package usecase

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/deps"
)

// TestToolRequestsValidate: the argument rules of patch-check, report and
// --release-lock, one message each, naming the input and the fix.
func TestToolRequestsValidate(t *testing.T) {
	dir := t.TempDir()
	checkout := filepath.Join(dir, "Megatron-LM")
	patch := filepath.Join(dir, "megatron.patch")
	if err := os.MkdirAll(filepath.Join(checkout, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(patch, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"patch-check", PatchCheckRequest{Megatron: checkout, Patch: patch}.Validate(), ""},
		{"no checkout", PatchCheckRequest{Patch: patch}.Validate(), "--megatron is required: give the Megatron-LM checkout at the selected ref, e.g. /root/Megatron-LM"},
		{"no patch", PatchCheckRequest{Megatron: checkout}.Validate(), "--patch is required: give the Miles workspace's docker/amd_patch/latest/megatron.patch"},
		{"not a git checkout", PatchCheckRequest{Megatron: dir + "/none", Patch: patch}.Validate(), "--megatron " + dir + "/none does not exist: not a git checkout; give the root of the Megatron-LM checkout, e.g. /root/Megatron-LM"},
		{"a missing patch", PatchCheckRequest{Megatron: checkout, Patch: dir + "/none.patch"}.Validate(), "--patch " + dir + "/none.patch does not exist; give the Miles workspace's docker/amd_patch/latest/megatron.patch"},
		{"report", ReportRequest{Results: dir}.Validate(), ""},
		{"report without results", ReportRequest{}.Validate(), "--results is required: give the results folder a test run wrote (summary.json inside)"},
		{"release lock", ReleaseLockRequest{Path: "release-lock.json"}.Validate(), ""},
		{"release lock without a file", ReleaseLockRequest{}.Validate(), "--release-lock needs a file: give the release-lock.json a release branch cut writes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := errText(tc.err); got != tc.want {
				t.Errorf("wanted %q, got %q", tc.want, got)
			}
		})
	}
}

// TestPatchCheck runs the check on a fake git: a dry run runs the checks
// only and applies nothing; an incompatible ref is ErrPatchIncompatible with
// the state set.
func TestPatchCheck(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	patch := filepath.Join(dir, "m.patch")
	if err := os.WriteFile(patch, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	exit := func(code int) PatchRunner {
		return func(context.Context, string, []string) (deps.StepResult, error) {
			return deps.StepResult{ExitCode: code}, nil
		}
	}
	ans, err := PatchCheck(context.Background(), PatchCheckRequest{Megatron: dir, Patch: patch, DryRun: true, Run: exit(0)})
	if err != nil || ans.Applied || ans.Text() != "ROCm patch applies cleanly to "+dir+": "+patch+" (dry run, not applied)\n" {
		t.Errorf("wanted a clean dry run, got %+v, %v", ans, err)
	}
	ans, err = PatchCheck(context.Background(), PatchCheckRequest{Megatron: dir, Patch: patch, Ref: "#82", Run: exit(1)})
	if !strings.Contains(errText(err), ErrPatchIncompatible.Error()) || ans.State != deps.PatchIncompatible {
		t.Errorf("wanted the incompatible state and error, got %q, %v", ans.State, err)
	}
}
