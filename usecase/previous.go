package usecase

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/internal/fsinput"
)

// PreviousRun is a finished graph run read back from its results folder,
// for a re-run of what failed (--rerun-failed).
type PreviousRun struct {
	// Dir is the results folder it was read from.
	Dir string
	// Report is its summary.json.
	Report *cirun.Report
}

// ReadPreviousRun reads the results folder of a miles-ci ci run: its
// summary.json, bounded; the kept shards' files are read when the re-run
// has run (EngineShards.keep).
func ReadPreviousRun(dir string) (*PreviousRun, error) {
	name := filepath.Join(dir, "summary.json")
	data, err := fsinput.ReadFile(name, fsinput.Kind{Name: "a summary.json", Max: cirun.MaxReportSize})
	if err != nil {
		return nil, fmt.Errorf("--rerun-failed: %w; give the results folder miles-ci ci --results wrote", err)
	}
	rep, err := cirun.ParseReport(name, data)
	if err != nil {
		return nil, fmt.Errorf("--rerun-failed: %w", err)
	}
	if rep.Run == nil {
		return nil, fmt.Errorf("--rerun-failed: %s records no run facts (commit, event, planner): it is a dry run's or an older miles-ci's; run miles-ci ci again without --rerun-failed", name)
	}
	return &PreviousRun{Dir: dir, Report: rep}, nil
}

// ErrNotSameRun marks a --rerun-failed folder that is not an earlier
// attempt of this run (another commit, event, trigger facts or planner): a
// usage error, exit 2.
var ErrNotSameRun = errors.New("not the same run")

// NothingToRerun says whether no job of the earlier attempt failed, was
// cancelled or could not run.
func (p *PreviousRun) NothingToRerun() bool { return len(p.Report.ToRerun()) == 0 }
