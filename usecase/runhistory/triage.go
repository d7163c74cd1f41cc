package runhistory

import (
	"context"
	"path/filepath"
	"time"

	"github.com/radixark/miles-ci/history"
	"github.com/radixark/miles-ci/triage"
	"github.com/radixark/miles-ci/usecase"
)

// TriageRecordRequest records a triage's attempts in the runtime history.
type TriageRecordRequest struct {
	DB     string
	Answer usecase.TriageAnswer
	// HeadRepo and BaseRepo are the two checkouts, for an est_time the
	// summaries lack (each side's own registration).
	HeadRepo, BaseRepo string
	// Out is the triage's results folder, where each attempt's rows are
	// kept (OUT/FILE/SIDE-N/history-rows.json); "" for none.
	Out string
	At  time.Time
}

// TriageRecorded is one attempt's recording.
type TriageRecorded struct {
	Dir   string
	Notes []string
	Err   error
}

// RecordTriage writes every attempt that ran as Miles' table holds a run:
// event_name triage, git_ref refs/triage/SESSION/SIDE, the side's commit,
// its own run id per side (triage.RunID) and the attempt's number as
// github_run_attempt, so no key meets another run's. The calibration reads
// only schedule rows (rules §13.2), so triage attempts never move an
// est_time; history flaky reads the verdict back from them.
func RecordTriage(ctx context.Context, r TriageRecordRequest) []TriageRecorded {
	var out []TriageRecorded
	for _, f := range r.Answer.Files {
		for _, a := range f.Attempts {
			if a.Summary == nil {
				continue
			}
			repo := r.HeadRepo
			if a.Side == triage.Base {
				repo = r.BaseRepo
			}
			one := RecordRequest{DB: r.DB, Summary: *a.Summary, Repo: repo, At: r.At, Provenance: history.Provenance{
				CommitSHA: orUnknown(a.Commit), RunID: triage.RunID(r.Answer.Session, a.Side), RunAttempt: a.N,
				Event: triage.Event, Ref: triage.Ref(r.Answer.Session, a.Side)}}
			if r.Out != "" {
				one.Results = filepath.Join(r.Out, filepath.FromSlash(a.Dir))
			}
			notes, err := Record(ctx, one)
			out = append(out, TriageRecorded{Dir: a.Dir, Notes: notes, Err: err})
		}
	}
	return out
}

func orUnknown(commit string) string {
	if commit == "" {
		return "unknown"
	}
	return commit
}
