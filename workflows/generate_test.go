package workflows

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/radixark/miles-ci/policy"
)

// The checked-in examples are what Generate writes today: regenerate them
// with `go run ./cmd/miles-ci workflows --out examples/workflows`.
func TestExamplesAreUpToDate(t *testing.T) {
	files, err := Generate(policy.Roster(), DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 || files[0].Name != "pr-test.yml" || files[1].Name != "pr-test-rocm.yml" || files[2].Name != "comment-ci-command.yml" {
		t.Fatalf("wanted pr-test.yml, pr-test-rocm.yml and comment-ci-command.yml, got %d files", len(files))
	}
	for _, f := range files {
		want, err := os.ReadFile(filepath.Join("..", "examples", "workflows", f.Name))
		if err != nil {
			t.Fatal(err)
		}
		if string(want) != string(f.Data) {
			t.Errorf("examples/workflows/%s is stale; run: go run ./cmd/miles-ci workflows --out examples/workflows", f.Name)
		}
	}
}

// job is the part of a generated job the tests read back.
type job struct {
	Needs    []string `yaml:"needs"`
	If       string   `yaml:"if"`
	RunsOn   any      `yaml:"runs-on"`
	Strategy struct {
		MaxParallel any `yaml:"max-parallel"`
		Matrix      struct {
			Shard any `yaml:"shard"` // a list, or an expression by cadence
		} `yaml:"matrix"`
	} `yaml:"strategy"`
	Steps []struct {
		Run string            `yaml:"run"`
		Env map[string]string `yaml:"env"`
	} `yaml:"steps"`
}

func parse(t *testing.T, data []byte) map[string]job {
	t.Helper()
	var wf struct {
		Jobs map[string]job `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	return wf.Jobs
}

func TestJobGraphFollowsTheRoster(t *testing.T) {
	files, err := Generate(policy.Roster(), DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	cuda, rocm := parse(t, files[0].Data), parse(t, files[1].Data)
	for _, st := range policy.Roster() {
		jobs := cuda
		if st.Backend == policy.ROCM {
			jobs = rocm
		}
		j, ok := jobs[st.Name]
		if st.External {
			if ok {
				t.Errorf("%s is run by the external nightly, wanted no job", st.Name)
			}
			continue
		}
		if !ok {
			t.Fatalf("no job for %s", st.Name)
		}
		t.Run(st.Name, func(t *testing.T) {
			if strings.Join(j.Needs, ",") != strings.Join(st.Needs, ",") {
				t.Errorf("needs: wanted %q, got %q", st.Needs, j.Needs)
			}
			ids, _ := j.Strategy.Matrix.Shard.([]any)
			if len(ids) != st.Shards {
				t.Errorf("wanted %d shards, got %v", st.Shards, j.Strategy.Matrix.Shard)
			}
			// Numbered as every output and shard --number count them, so
			// GitHub's job title "stage-a-cpu (2)" is shard 2/4.
			for i, id := range ids {
				if id != i+1 {
					t.Errorf("wanted the shards numbered 1 to %d, got %v", st.Shards, ids)
					break
				}
			}
			runsOn := j.RunsOn
			if s, ok := runsOn.(string); ok {
				runsOn = []any{s}
			}
			var got []string
			for _, l := range runsOn.([]any) {
				got = append(got, l.(string))
			}
			if strings.Join(got, ",") != strings.Join(st.RunsOn, ",") {
				t.Errorf("runs-on: wanted %q, got %q", st.RunsOn, got)
			}
			skipGate := "!contains(fromJSON(needs.policy.outputs.skipped_stages || '[]'), '" + st.Name + "')"
			if gpu := st.Backend != policy.CPU; gpu != strings.Contains(j.If, skipGate) {
				t.Errorf("skipped-stage gate: wanted it=%t, got if %q", gpu, j.If)
			}
			fastFail := "(needs.stage-a-cpu.result == 'success' || needs.policy.outputs.bypass_fastfail == 'true')"
			if st.FastFailGated != strings.Contains(j.If, fastFail) {
				t.Errorf("fast-fail gate: wanted it=%t, got if %q", st.FastFailGated, j.If)
			}
			wantPar := any(st.MaxParallel)
			if st.MaxParallelWeekly != st.MaxParallel {
				wantPar = "${{ needs.policy.outputs.cadence == 'weekly' && 1 || " + string(rune('0'+st.MaxParallel)) + " }}"
			}
			if j.Strategy.MaxParallel != wantPar {
				t.Errorf("max-parallel: wanted %v, got %v", wantPar, j.Strategy.MaxParallel)
			}
			run := j.Steps[len(j.Steps)-1].Run
			for _, want := range []string{`dagger call "${module[@]}" "${stage[@]}" shard --number "$SHARD" test --run-id "$RUN_ID" results export`, `test --run-id "$RUN_ID" assert`, `go run "$MILES_CI" report --results`} {
				if !strings.Contains(run, want) {
					t.Errorf("the stage step does not run %q:\n%s", want, run)
				}
			}
			// Nothing a PR author writes reaches the script except through the environment.
			if strings.Contains(run, "${{") {
				t.Errorf("the script interpolates an expression; pass it through env:\n%s", run)
			}
		})
	}
}

func TestGenerateErrors(t *testing.T) {
	bad := policy.Roster()
	bad[0].Needs = []string{"policy", "lint"}
	if _, err := Generate(bad, DefaultOptions); err == nil || err.Error() != `stage stage-a-cpu needs "lint", which is neither a helper job (policy, image, deps) nor a stage of pr-test.yml; fix the roster` {
		t.Errorf("wanted the unknown-need error, got %v", err)
	}
	o := DefaultOptions
	o.Ref = "main; rm -rf /"
	if _, err := Generate(policy.Roster(), o); err == nil || err.Error() != `--ref "main; rm -rf /" is not a miles-ci version; give a tag, branch or commit, e.g. main` {
		t.Errorf("wanted the ref error, got %v", err)
	}
	for _, tt := range []struct {
		name string
		edit func(*Options, []policy.Stage)
		want string
	}{
		{"dagger version", func(o *Options, _ []policy.Stage) { o.DaggerVersion = "0.21.8; curl x | sh" },
			`--dagger-version "0.21.8; curl x | sh" is not a Dagger release; give one like 0.21.8`},
		{"empty dagger version", func(o *Options, _ []policy.Stage) { o.DaggerVersion = "" },
			`--dagger-version "" is not a Dagger release; give one like 0.21.8`},
		{"go version", func(o *Options, _ []policy.Stage) { o.GoVersion = "$(id)" },
			`--go-version "$(id)" is not a Go version setup-go reads; give one like 1.26, 1.26.x or 1.26.1`},
		// A stage is a job id and is quoted in the skipped-stages gate: a quote
		// would drop the gate, so such a roster is refused, not written.
		{"stage name", func(_ *Options, r []policy.Stage) { r[2].Name = "stage-b-$(id)'x" },
			`stage "stage-b-$(id)'x" cannot be a GitHub Actions job id (letters, digits, - and _, starting with a letter or _); rename its job and suite`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o, r := DefaultOptions, policy.Roster()
			tt.edit(&o, r)
			if _, err := Generate(r, o); err == nil || err.Error() != tt.want {
				t.Errorf("wanted %q, got %v", tt.want, err)
			}
		})
	}
}

// A roster read from a checkout written like the real Miles names its helper
// jobs resolve-ci-*, and one stage's shards depend on the cadence.
func TestRosterFromACheckout(t *testing.T) {
	tables, err := policy.LoadTables(filepath.Join("..", "testdata", "miles-like"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(tables.Stages(), DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	jobs := parse(t, files[0].Data)
	h100 := jobs["stage-c-8-gpu-h100"]
	if got := strings.Join(h100.Needs, ","); got != "policy,image,stage-a-cpu" {
		t.Errorf("needs: wanted the helper jobs by their short names, got %q", got)
	}
	want := "${{ fromJSON(needs.policy.outputs.cadence == 'nightly' && '[1,2]' || needs.policy.outputs.cadence == 'weekly' && '[1,2]' || needs.policy.outputs.cadence == 'release' && '[1,2]' || '[1]') }}"
	if got := h100.Strategy.Matrix.Shard; got != want {
		t.Errorf("shards by cadence: wanted %q, got %v", want, got)
	}
	if _, ok := jobs["policy"]; !ok {
		t.Error("wanted a policy job")
	}
	if strings.Contains(jobs["stage-b-cpu"].If, "skipped_stages") {
		t.Errorf("a CPU stage is not skip-gated, got if %q", jobs["stage-b-cpu"].If)
	}
}

// TestEverySecretHasAFlag holds that each secret a backend profile lists has
// the module flag a stage job passes it with.
func TestEverySecretHasAFlag(t *testing.T) {
	for _, b := range policy.Backends() {
		for _, s := range policy.ProfileOf(b).Secrets {
			if secretFlags[s] == "" {
				t.Errorf("wanted a module flag for %s's secret %s (secretFlags), got none", b, s)
			}
		}
	}
}

// TestCommentWorkflow: the gateway's workflow has Miles' four jobs, their
// needs and routing, and runs each mode of the script through the module's
// comment function with that job's token.
func TestCommentWorkflow(t *testing.T) {
	f, err := commentWorkflow(DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	jobs := parse(t, f.Data)
	for name, want := range map[string]struct {
		needs []string
		modes []string
		cond  string
	}{
		"handle-command":      {nil, []string{"preflight", "command"}, "github.event.comment.user.type == 'User'"},
		"actions-command":     {[]string{"handle-command"}, []string{"command"}, "needs.handle-command.outputs.capability == 'actions'"},
		"acknowledge-command": {[]string{"handle-command", "actions-command"}, []string{"acknowledge"}, "needs.handle-command.outputs.success_reaction == '+1'"},
		"reply-command":       {[]string{"actions-command"}, []string{"reply"}, "needs.actions-command.outputs.workflow_run_url != ''"},
	} {
		j, ok := jobs[name]
		if !ok {
			t.Errorf("no job %s", name)
			continue
		}
		if strings.Join(j.Needs, ",") != strings.Join(want.needs, ",") || !strings.Contains(j.If, want.cond) {
			t.Errorf("%s: wanted needs %v and an if: with %q, got %v and %q", name, want.needs, want.cond, j.Needs, j.If)
		}
		var modes []string
		for _, st := range j.Steps {
			if !strings.Contains(st.Run, "dagger call") {
				continue
			}
			for _, m := range []string{"preflight", "command", "acknowledge", "reply"} {
				if strings.Contains(st.Run, "--mode "+m+" ") {
					modes = append(modes, m)
				}
			}
			if !strings.Contains(st.Run, "--token env:CI_COMMAND_API_TOKEN") || st.Env["CI_COMMAND_API_TOKEN"] == "" {
				t.Errorf("%s: a step runs the gateway without the job's token in the environment:\n%s", name, st.Run)
			}
		}
		if strings.Join(modes, ",") != strings.Join(want.modes, ",") {
			t.Errorf("%s: wanted the modes %v, got %v", name, want.modes, modes)
		}
	}
}
