package history

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/radixark/miles-ci/estimate"
)

// The attempt rule, one for every way in and out of a store (import,
// recording, reading, calibration) and the same on both back ends: the
// seconds finite, not negative and at most estimate.MaxSeconds
// (estimated_seconds more than 0), a known status, a test attempt from 1,
// and text that is UTF-8 without NUL (Postgres refuses NUL and invalid
// UTF-8; SQLite would take them, so one store would hold what the other
// refuses). A value outside it is refused where it enters (Batch.Validate)
// and skipped, with a warning, where it is read (Store.Skipped).

// Check is the attempt rule for one attempt.
func (a Attempt) Check() error {
	switch a.Status {
	case Pass, Fail, Timeout:
	default:
		return fmt.Errorf("unsupported runtime status: %q; a status is PASS, FAIL or TIMEOUT", a.Status)
	}
	if err := checkText("test_path", a.TestPath); err != nil {
		return err
	}
	if err := checkText("backend", a.Backend); err != nil {
		return err
	}
	if err := checkText("suite", a.Suite); err != nil {
		return err
	}
	if err := estimate.CheckSeconds("elapsed_seconds", a.ElapsedS, false); err != nil {
		return fmt.Errorf("invalid elapsed_seconds of %s: %w", a.TestPath, err)
	}
	if err := estimate.CheckSeconds("estimated_seconds", a.EstimatedS, true); err != nil {
		return fmt.Errorf("invalid estimated_seconds of %s: %w", a.TestPath, err)
	}
	if a.TestAttempt < 1 {
		return fmt.Errorf("invalid test_attempt of %s: %d", a.TestPath, a.TestAttempt)
	}
	return nil
}

// Check is the attempt rule for a batch's provenance.
func (p Provenance) Check() error {
	if p.RunAttempt < 1 {
		return fmt.Errorf("invalid github_run_attempt: %d; a run's attempts count from 1", p.RunAttempt)
	}
	if p.RunID < 0 {
		return fmt.Errorf("invalid github_run_id: %d", p.RunID)
	}
	for _, f := range []struct{ name, v string }{{"commit_sha", p.CommitSHA}, {"event_name", p.Event}, {"git_ref", p.Ref}} {
		if err := checkText(f.name, f.v); err != nil {
			return err
		}
	}
	return nil
}

// checkRow is the attempt rule for a row read back.
func checkRow(r Row) error {
	if err := r.Provenance.Check(); err != nil {
		return err
	}
	return r.Attempt.Check()
}

// checkText refuses text either store would keep differently.
func checkText(name, v string) error {
	switch {
	case strings.ContainsRune(v, 0):
		return fmt.Errorf("invalid %s %q: it holds a NUL character, which Postgres refuses", name, v)
	case !utf8.ValidString(v):
		return fmt.Errorf("invalid %s %q: it is not UTF-8, which Postgres refuses", name, v)
	}
	return nil
}
