package history

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/radixark/miles-ci/estimate"
	"github.com/radixark/miles-ci/report"
)

// RowsFile is the file of a results folder that keeps a run's batch, so a
// run whose store failed can be recorded later (miles-ci history import).
const RowsFile = "history-rows.json"

// LocalEvent is the event of a run outside GitHub Actions; its rows never
// count toward an estimate unless the calibration is asked for it.
const LocalEvent = "local"

// statusOf is a report status as the table spells it.
func statusOf(s report.Status) (string, bool) {
	switch s {
	case report.Pass:
		return Pass, true
	case report.Fail:
		return Fail, true
	case report.Timeout:
		return Timeout, true
	}
	return "", false
}

// AttemptsOf are a run's attempts: each try of each file that ran, with
// the file's est_time (estOf gives it where the summary has none; 0 leaves
// the file out, with a note). An inconsistent run gives none: its per-file
// outcomes contradict the runner, so they are not trusted.
func AttemptsOf(s report.Summary, estOf func(file string) float64) ([]Attempt, []string) {
	if s.Verdict == report.Inconsistent {
		return nil, []string{fmt.Sprintf("%s is inconsistent, so its per-file outcomes are not recorded", s.Name())}
	}
	var out []Attempt
	var notes []string
	backend := estimate.BackendName(s.HW)
	for _, t := range s.Tests {
		if t.Status == report.NotRun || t.Attempts == 0 {
			continue
		}
		est := t.EstTime
		if est <= 0 && estOf != nil {
			est = estOf(t.File)
		}
		if est <= 0 {
			notes = append(notes, fmt.Sprintf("%s has no est_time in the results, so its attempts are not recorded; give --repo, the checkout it ran", t.File))
			continue
		}
		tries := t.Tries
		if len(tries) == 0 {
			if t.Attempts != 1 {
				notes = append(notes, fmt.Sprintf("%s ran %d times but the results keep no seconds per attempt (an older miles-ci), so its attempts are not recorded", t.File, t.Attempts))
				continue
			}
			tries = []report.Try{{Status: t.Status, ElapsedS: t.ElapsedS}}
		}
		for i, try := range tries {
			status, ok := statusOf(try.Status)
			if !ok {
				continue
			}
			out = append(out, Attempt{TestPath: t.File, Backend: backend, Suite: s.Suite, TestAttempt: i + 1,
				Status: status, ElapsedS: try.ElapsedS, EstimatedS: est})
		}
	}
	return out, notes
}

// RecordSummary writes a run's attempts with their provenance, all or
// none, and returns the batch it wrote (or tried to), for RowsFile. The
// graph run calls it once per stage shard, as run and file-run do.
func RecordSummary(ctx context.Context, store Store, s report.Summary, p Provenance, at time.Time, estOf func(string) float64) (Batch, []string, error) {
	attempts, notes := AttemptsOf(s, estOf)
	b := Batch{Provenance: p, Attempts: attempts, RecordedAt: at.UTC()}
	if store == nil {
		return b, notes, nil
	}
	return b, notes, store.Write(ctx, b)
}

// ProvenanceFromEnv is a run's provenance. Inside GitHub Actions
// (GITHUB_ACTIONS=true) it is the run's own, as Miles records it:
// GITHUB_SHA, GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT, GITHUB_EVENT_NAME and
// GITHUB_REF, all required. Elsewhere it is local: event "local", ref
// "local", attempt 1, the commit given (or "unknown"), and a run id from
// runID: the number itself, or a 63-bit hash of the text, so the same id
// names the same run.
func ProvenanceFromEnv(getenv func(string) string, commit, runID string) (Provenance, error) {
	if getenv("GITHUB_ACTIONS") != "true" {
		if commit == "" {
			commit = "unknown"
		}
		return Provenance{CommitSHA: commit, RunID: LocalRunID(runID), RunAttempt: 1, Event: LocalEvent, Ref: LocalEvent}, nil
	}
	var missing []string
	for _, name := range []string{"GITHUB_SHA", "GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT", "GITHUB_EVENT_NAME", "GITHUB_REF"} {
		if getenv(name) == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return Provenance{}, fmt.Errorf("the runtime provenance needs %s, which GitHub Actions sets in a job", strings.Join(missing, ", "))
	}
	id, err := strconv.ParseInt(getenv("GITHUB_RUN_ID"), 10, 64)
	if err != nil || id < 0 {
		return Provenance{}, fmt.Errorf("GITHUB_RUN_ID %q is not a run id", getenv("GITHUB_RUN_ID"))
	}
	attempt, err := strconv.Atoi(getenv("GITHUB_RUN_ATTEMPT"))
	if err != nil || attempt < 1 {
		return Provenance{}, fmt.Errorf("GITHUB_RUN_ATTEMPT %q is not a run attempt (1 or more)", getenv("GITHUB_RUN_ATTEMPT"))
	}
	return Provenance{CommitSHA: getenv("GITHUB_SHA"), RunID: id, RunAttempt: attempt, Event: getenv("GITHUB_EVENT_NAME"), Ref: getenv("GITHUB_REF")}, nil
}

// LocalRunID is a local run's id: runID when it is a number, else a 63-bit
// FNV-1a hash of it.
func LocalRunID(runID string) int64 {
	if n, err := strconv.ParseInt(runID, 10, 64); err == nil && n >= 0 {
		return n
	}
	h := fnv.New64a()
	h.Write([]byte(runID))
	return int64(h.Sum64() >> 1)
}
