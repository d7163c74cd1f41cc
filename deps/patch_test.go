package deps

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/internal/hostexec"
)

func TestDecidePatch(t *testing.T) {
	tests := []struct {
		check, reverse bool
		want           PatchState
	}{
		{true, false, PatchApply},
		{true, true, PatchApply},
		{false, true, PatchAlreadyPresent},
		{false, false, PatchIncompatible},
	}
	for _, tt := range tests {
		t.Run(string(tt.want), func(t *testing.T) {
			if got := DecidePatch(tt.check, tt.reverse); got != tt.want {
				t.Errorf("wanted %q, got %q", tt.want, got)
			}
		})
	}
}

func TestNewPatchPlan(t *testing.T) {
	p := NewPatchPlan("-x.patch")
	want := PatchPlan{
		Patch:        "./-x.patch",
		Check:        []string{"git", "apply", "--check", "./-x.patch"},
		ReverseCheck: []string{"git", "apply", "--reverse", "--check", "./-x.patch"},
		Apply:        []string{"git", "apply", "./-x.patch"},
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("wanted %+v, got %+v", want, p)
	}
}

// fakeRunner answers each argv from a table of exit codes keyed by the joined argv.
func fakeRunner(codes map[string]int, runErr error) Runner {
	return func(_ context.Context, _ string, argv []string) (StepResult, error) {
		if runErr != nil {
			return StepResult{}, runErr
		}
		return StepResult{ExitCode: codes[strings.Join(argv, " ")], Output: "error: corrupt patch at line 6\n"}, nil
	}
}

func TestPatchPlanRunFake(t *testing.T) {
	const (
		check   = "git apply --check m.patch"
		reverse = "git apply --reverse --check m.patch"
		apply   = "git apply m.patch"
	)
	plan := NewPatchPlan("m.patch")
	tests := []struct {
		name    string
		codes   map[string]int
		mode    PatchMode
		runErr  error
		want    PatchOutcome
		wantErr string
	}{
		{name: "apply", codes: map[string]int{}, mode: PatchCheckAndApply,
			want: PatchOutcome{State: PatchApply, Applied: true, Steps: [][]string{plan.Check, plan.Apply}}},
		{name: "dry run", codes: map[string]int{}, mode: PatchCheckOnly,
			want: PatchOutcome{State: PatchApply, Steps: [][]string{plan.Check}}},
		{name: "already present", codes: map[string]int{check: 1}, mode: PatchCheckAndApply,
			want: PatchOutcome{State: PatchAlreadyPresent, Steps: [][]string{plan.Check, plan.ReverseCheck}}},
		{name: "incompatible", codes: map[string]int{check: 1, reverse: 1}, mode: PatchCheckAndApply,
			want:    PatchOutcome{State: PatchIncompatible, Steps: [][]string{plan.Check, plan.ReverseCheck}},
			wantErr: "Selected Megatron ref is incompatible with the ROCm patch: m.patch neither applies to nor is already present in Megatron-LM #82 (/mlm); pick a Megatron-LM ref based on miles-main or update docker/amd_patch/latest/megatron.patch to match it"},
		{name: "unreadable patch", codes: map[string]int{check: 128}, mode: PatchCheckAndApply,
			want:    PatchOutcome{Steps: [][]string{plan.Check}},
			wantErr: "git apply --check m.patch in /mlm failed with exit status 128 (git could not read the patch; check that m.patch is a patch file): error: corrupt patch at line 6"},
		{name: "apply fails after check", codes: map[string]int{apply: 1}, mode: PatchCheckAndApply,
			want:    PatchOutcome{State: PatchApply, Steps: [][]string{plan.Check, plan.Apply}},
			wantErr: "git apply m.patch in /mlm failed although --check passed; the checkout changed between the steps, rerun the job"},
		{name: "git missing", runErr: errors.New(`exec: "git": executable file not found in $PATH`),
			want:    PatchOutcome{Steps: [][]string{plan.Check}},
			wantErr: `git apply --check m.patch in /mlm: exec: "git": executable file not found in $PATH`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := plan.Run(context.Background(), fakeRunner(tt.codes, tt.runErr), "/mlm", "#82", tt.mode)
			checkErr(t, err, tt.wantErr)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("wanted %+v, got %+v", tt.want, got)
			}
		})
	}
}

// gitRepo makes a git repository with one file and returns its path.
func gitRepo(t *testing.T, content string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "megatron", "core"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "megatron", "core", "fusions.py"), content)
	git(t, dir, "init", "-q")
	git(t, dir, "add", ".")
	git(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
	return dir
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPatchPlanRunGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	const (
		base    = "def fused():\n    return 'cuda'\n"
		patched = "def fused():\n    return 'rocm'\n"
		other   = "def fused():\n    return 'other'\n"
	)
	// Make the patch from a scratch repo: base -> patched.
	scratch := gitRepo(t, base)
	writeFile(t, filepath.Join(scratch, "megatron", "core", "fusions.py"), patched)
	patch := filepath.Join(t.TempDir(), "megatron.patch")
	writeFile(t, patch, git(t, scratch, "diff"))

	tests := []struct {
		name      string
		content   string
		want      PatchState
		wantFile  string
		wantErrIs error
	}{
		{name: "applies", content: base, want: PatchApply, wantFile: patched},
		{name: "already applied", content: patched, want: PatchAlreadyPresent, wantFile: patched},
		{name: "file differs", content: other, want: PatchIncompatible, wantFile: other, wantErrIs: ErrPatchIncompatible},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := gitRepo(t, tt.content)
			got, err := NewPatchPlan(patch).Run(context.Background(), hostRunner, dir, "miles-main", PatchCheckAndApply)
			if tt.wantErrIs == nil && err != nil {
				t.Fatalf("wanted no error, got %v", err)
			}
			if tt.wantErrIs != nil && !errors.Is(err, tt.wantErrIs) {
				t.Fatalf("wanted %v, got %v", tt.wantErrIs, err)
			}
			if got.State != tt.want {
				t.Errorf("wanted %q, got %q", tt.want, got.State)
			}
			data, _ := os.ReadFile(filepath.Join(dir, "megatron", "core", "fusions.py"))
			if string(data) != tt.wantFile {
				t.Errorf("file after run: wanted %q, got %q", tt.wantFile, string(data))
			}
		})
	}

	t.Run("missing patch file", func(t *testing.T) {
		dir := gitRepo(t, base)
		_, err := NewPatchPlan(filepath.Join(dir, "nope.patch")).Run(context.Background(), hostRunner, dir, "", PatchCheckAndApply)
		if err == nil || !strings.Contains(err.Error(), "failed with exit status 128") {
			t.Errorf("wanted an exit status 128 error, got %v", err)
		}
	})
}

var hostRunner = RunnerOf(hostexec.Run)
