package ci

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/usecase"
)

// imageFake is a container that only says where it came from; the other
// methods of stagerun.Container are not reached by these tests.
type imageFake struct {
	stagerun.Container
	from     string
	buildErr error
}

func (f imageFake) From(image string) stagerun.Container { return imageFake{from: "pulled " + image} }
func (f imageFake) FromCheckoutDockerfile(dockerfile string) stagerun.Container {
	return imageFake{from: "built " + dockerfile, buildErr: f.buildErr}
}
func (f imageFake) Stat(context.Context, string) (stagerun.FileInfo, error) {
	return stagerun.FileInfo{Type: stagerun.FileDirectory}, f.buildErr
}

func TestEngineShardsRunCUDAShardsOnTheBuiltPRImage(t *testing.T) {
	m, _ := report.NewMasker(nil)
	var from []string
	e := &EngineShards{Container: func() stagerun.Container { return imageFake{} }, Masker: m,
		Run: func(_ context.Context, c stagerun.Container, req stagerun.Request, _ string, _ *report.Masker) (stagerun.Result, stagerun.Spec, error) {
			from = append(from, c.From(req.Image.Image).(imageFake).from)
			return stagerun.Result{Summary: report.Summary{Verdict: report.Passed, Passed: true}}, stagerun.Spec{}, nil
		}}
	u := &cirun.Unit{Stage: &policy.Stage{Name: "stage-b-2-gpu-h200"}}
	run := func(image string) {
		if o := e.RunShard(context.Background(), stagerun.Request{Image: deps.Image{Image: image}}, u); o.Result != cirun.ResultSuccess {
			t.Fatalf("wanted the shard to pass, got %+v", o)
		}
	}
	run("radixark/miles:pr-7")
	img, err := e.BuildImage(context.Background(), "pr-7")
	if err != nil || img != "radixark/miles:pr-7 from docker/Dockerfile" {
		t.Fatalf("wanted the built image named, got %q, %v", img, err)
	}
	run("radixark/miles:pr-7")
	run("radixark/miles:dev")
	want := []string{"pulled radixark/miles:pr-7", "built docker/Dockerfile", "pulled radixark/miles:dev"}
	if strings.Join(from, "; ") != strings.Join(want, "; ") {
		t.Errorf("wanted the shards to start from %q, got %q", want, from)
	}
}

func TestEngineShardsFailsTheImageJobOnABrokenDockerfile(t *testing.T) {
	m, _ := report.NewMasker(map[string]string{"WANDB_API_KEY": "secret-value-123"})
	e := &EngineShards{Container: func() stagerun.Container {
		return imageFake{buildErr: errors.New("RUN step: secret-value-123 not found")}
	}, Masker: m}
	_, err := e.BuildImage(context.Background(), "pr-7")
	if err == nil || !strings.Contains(err.Error(), "docker build -f docker/Dockerfile: RUN step") || strings.Contains(err.Error(), "secret-value-123") {
		t.Errorf("wanted the build's error, masked, naming the Dockerfile, got %v", err)
	}
}

// passShards passes every shard.
type passShards struct{}

func (passShards) RunShard(context.Context, stagerun.Request, *cirun.Unit) cirun.Outcome {
	return cirun.Outcome{Result: cirun.ResultSuccess}
}
func (passShards) BuildImage(context.Context, string) (string, error) { return "", nil }

// TestCIReadsTheDiffOnce: the policy jobs of both PR workflows want the diff
// at once; the front end's reader is called once (the module's exports the
// file to one path and removes it after).
func TestCIReadsTheDiffOnce(t *testing.T) {
	repo := ciTree(t)
	var calls atomic.Int32
	req := CIRequest{Repo: repo, Event: "pull_request", PRLabelsJSON: `["run-ci-megatron"]`, Host: cirun.Host{StandIn: true}, Shards: passShards{},
		Given: usecase.Given{Diff: true}, ReadDiff: func() ([]byte, string, error) {
			calls.Add(1)
			time.Sleep(10 * time.Millisecond)
			d, why := usecase.ReadChangedFiles(filepath.Join(repo, "diffs", "cpu_only.z"), "diff")
			return d, why, nil
		}}
	ans, err := CI(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("wanted the diff read once, got %d reads", n)
	}
	if code := ans.Report.ExitStatus(); code != 0 {
		t.Errorf("wanted the run to pass, got exit %d\n%s", code, ans.Report.Text())
	}
}

// askedGit is a usecase.Git that counts the questions it is asked.
type askedGit struct{ asked atomic.Int32 }

func (g *askedGit) Head(context.Context, string) (string, error) {
	g.asked.Add(1)
	return "feedface", nil
}

// TestCIAsksGitOnlyForARun: a run's facts name the commit git says is
// checked out, or the one given; a dry run asks nothing (the module's git
// is its source's digest, which costs an engine call).
func TestCIAsksGitOnlyForARun(t *testing.T) {
	repo := ciTree(t)
	for _, tc := range []struct {
		name       string
		shards     ShardRunner
		given      string
		wantAsked  int32
		wantCommit string
	}{
		{name: "dry run", wantAsked: 0},
		{name: "run", shards: passShards{}, wantAsked: 1, wantCommit: "feedface"},
		{name: "run with --head-sha", shards: passShards{}, given: "c0ffee", wantAsked: 0, wantCommit: "c0ffee"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			git := &askedGit{}
			ans, err := CI(context.Background(), CIRequest{Repo: repo, Event: "pull_request", Host: cirun.Host{StandIn: true}, Only: []string{"stage-a-cpu"},
				Shards: tc.shards, HeadSHA: tc.given, Git: git})
			if err != nil {
				t.Fatal(err)
			}
			if n := git.asked.Load(); n != tc.wantAsked {
				t.Errorf("wanted git asked %d time(s), got %d", tc.wantAsked, n)
			}
			commit := ""
			if ans.Report.Run != nil {
				commit = ans.Report.Run.Commit
			}
			if commit != tc.wantCommit {
				t.Errorf("wanted the run's commit %q, got %q", tc.wantCommit, commit)
			}
		})
	}
}
