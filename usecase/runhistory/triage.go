package runhistory

import (
	"context"
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
	At                 time.Time
}

// RecordTriage writes every attempt that ran as Miles' table holds a run:
// event_name triage, git_ref refs/triage/SESSION/SIDE, the side's commit,
// its own run id per side (triage.RunID) and the attempt's number as
// github_run_attempt, so no key meets another run's. The calibration reads
// only schedule rows (rules §13.2), so triage attempts never move an
// est_time; history flaky reads the verdict back from them.
// Each attempt's rows are for its folder, FILE/SIDE-N/history-rows.json.
func RecordTriage(ctx context.Context, r TriageRecordRequest) []Recorded {
	var out []Recorded
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
			rec := Record(ctx, one)
			rec.Dir = a.Dir
			out = append(out, rec)
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
