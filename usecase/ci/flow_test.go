package ci

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/whatif"
)

// frontEnd is a front end's side of a run, recorded: what the use case
// asked it to ready, and which hosts' engines it connected to.
type frontEnd struct {
	mu        sync.Mutex
	readied   []string
	connected []string
	refuse    bool
}

type fakeSession struct{}

func (fakeSession) Check(context.Context) error   { return nil }
func (fakeSession) Container() stagerun.Container { return imageFake{} }
func (fakeSession) Close() error                  { return nil }

// shards is an EngineShards on f, every shard passing except fail.
func (f *frontEnd) shards(fail map[string]bool) *EngineShards {
	e, _ := attemptShards(1, fail)
	e.Container = nil
	e.Ready = func(results, name string) (string, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.readied = append(f.readied, results+" "+name)
		if results == "" {
			results = "new-" + name
		}
		return results, nil
	}
	e.Connect = func(_ context.Context, h cirun.Host) (Session, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.connected = append(f.connected, "engine "+h.Engine)
		if f.refuse {
			return nil, errors.New("connection refused")
		}
		return fakeSession{}, nil
	}
	return e
}

// TestCIOwnsTheFlow: the use case decides what a call does with the front
// end's engine: a dry run and a re-run with nothing to re-run ready and
// connect nothing; a run readies its results folder (a re-run its own)
// and connects the one host before its first shard, a fleet each host on
// first use; an engine that refuses the run is an EngineError.
func TestCIOwnsTheFlow(t *testing.T) {
	repo := ciTree(t)
	base := CIRequest{Repo: repo, Event: "pull_request", Host: cirun.Host{StandIn: true}, Only: []string{"stage-a-cpu"}, HeadSHA: "c0ffee", RunID: "run-1"}

	t.Run("a dry run readies nothing", func(t *testing.T) {
		f := &frontEnd{}
		req := base
		req.DryRun, req.Shards = true, f.shards(nil)
		ans, err := CI(context.Background(), req)
		if err != nil || ans.Mode != Planned || len(f.readied)+len(f.connected) > 0 || ans.Report.Run != nil {
			t.Errorf("wanted a plan and nothing readied, got %v %s %v %v", err, ans.Mode, f.readied, f.connected)
		}
	})

	results := filepath.Join(t.TempDir(), "results")
	t.Run("a run readies a new folder and the one host's engine", func(t *testing.T) {
		f := &frontEnd{}
		req := base
		req.Shards = f.shards(map[string]bool{"stage-a-cpu/0": true})
		ans, err := CI(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if ans.Mode != Ran || ans.Dir != "new-pull_request" || ans.Results == nil || ans.Report.Run == nil {
			t.Errorf("wanted a run with its results in new-pull_request, got %s %q %v", ans.Mode, ans.Dir, ans.Results == nil)
		}
		if !slices.Equal(f.readied, []string{" pull_request"}) || !slices.Equal(f.connected, []string{"engine "}) {
			t.Errorf("wanted one folder readied and the one engine connected, got %v %v", f.readied, f.connected)
		}
		writeFolder(t, results, ans.Results.Files)
	})

	t.Run("a re-run completes its own folder", func(t *testing.T) {
		f := &frontEnd{}
		req := base
		req.RerunFailed, req.Shards = results, f.shards(nil)
		ans, err := CI(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if ans.Mode != Ran || ans.Dir != results || !slices.Equal(f.readied, []string{results + " pull_request"}) {
			t.Errorf("wanted the re-run's results in %s, got %s %q %v", results, ans.Mode, ans.Dir, f.readied)
		}
		writeFolder(t, results, ans.Results.Files)
	})

	t.Run("a re-run with nothing to re-run readies nothing", func(t *testing.T) {
		f := &frontEnd{}
		req := base
		req.RerunFailed, req.Shards = results, f.shards(nil)
		ans, err := CI(context.Background(), req)
		if err != nil || ans.Mode != Kept || !ans.NothingToRerun || len(f.readied)+len(f.connected) > 0 {
			t.Errorf("wanted the earlier attempt kept and nothing readied, got %v %s %v %v", err, ans.Mode, f.readied, f.connected)
		}
	})

	t.Run("a folder that is no run's is input the run cannot use", func(t *testing.T) {
		req := base
		req.RerunFailed = t.TempDir()
		_, err := CI(context.Background(), req)
		var input *InputError
		if !errors.As(err, &input) || !strings.Contains(err.Error(), "--rerun-failed") {
			t.Errorf("wanted an InputError naming --rerun-failed, got %v", err)
		}
	})

	t.Run("a fleet connects each host on first use", func(t *testing.T) {
		f := &frontEnd{}
		req := base
		req.Host = cirun.Host{}
		req.Hosts = []cirun.Host{{Name: "a", Engine: "tcp://a:1", StandIn: true}, {Name: "b", Engine: "tcp://b:1", StandIn: true}}
		req.MaxParallel = 1
		req.Shards = f.shards(nil)
		ans, err := CI(context.Background(), req)
		if err != nil || ans.Mode != Ran {
			t.Fatalf("wanted a run, got %v %s", err, ans.Mode)
		}
		for _, c := range f.connected {
			if c != "engine tcp://a:1" && c != "engine tcp://b:1" {
				t.Errorf("wanted only the fleet's engines connected, got %v", f.connected)
			}
		}
		if len(f.connected) == 0 || len(f.connected) > 2 {
			t.Errorf("wanted each host that ran a shard connected once, got %v", f.connected)
		}
	})

	t.Run("the history is read by a run and a what-if, not by a dry run", func(t *testing.T) {
		for _, c := range []struct {
			name        string
			dry, whatIf bool
			want        string
		}{{"dry run", true, false, ""}, {"run", false, false, "run"}, {"what-if", false, true, "what-if"}} {
			var read []string
			req := base
			req.DryRun, req.WhatIf, req.Shards = c.dry, c.whatIf, (&frontEnd{}).shards(nil)
			req.ReadDurations = func(whatIf bool) (*whatif.Durations, error) {
				read = append(read, map[bool]string{false: "run", true: "what-if"}[whatIf])
				return nil, errors.New("no history")
			}
			_, err := CI(context.Background(), req)
			if strings.Join(read, " ") != c.want || (c.want != "") != (err != nil) {
				t.Errorf("%s: wanted the history read as %q and its error returned, got %q, %v", c.name, c.want, read, err)
			}
		}
	})

	t.Run("an engine that refuses the run", func(t *testing.T) {
		f := &frontEnd{refuse: true}
		req := base
		req.Shards = f.shards(nil)
		_, err := CI(context.Background(), req)
		var engine *EngineError
		if !errors.As(err, &engine) || err.Error() != "connection refused" {
			t.Errorf("wanted an EngineError, got %v", err)
		}
	})
}
