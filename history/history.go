// Package history is the runtime history of test attempts (rules §13.1):
// one row per attempt of a test file in Miles' table
// ci_test_runtime_attempts, behind one small interface with two back ends,
// SQLite in a file (the default) and Postgres (Miles' own table). miles-ci
// writes rows and reads them; it creates the table only in a database that
// has none (Init, or a new SQLite file), and never alters one.
package history

import (
	"context"
	"fmt"
	"time"

	"github.com/radixark/miles-ci/estimate"
)

// Table is Miles' table.
const Table = "ci_test_runtime_attempts"

// The statuses an attempt can have.
const (
	Pass    = "PASS"
	Fail    = "FAIL"
	Timeout = "TIMEOUT"
)

// Attempt is one run of one test file: a row's test columns.
type Attempt struct {
	TestPath    string  `json:"test_path"`
	Backend     string  `json:"backend"`
	Suite       string  `json:"suite"`
	TestAttempt int     `json:"test_attempt"`
	Status      string  `json:"status"`
	ElapsedS    float64 `json:"elapsed_seconds"`
	EstimatedS  float64 `json:"estimated_seconds"`
}

// Provenance is where a batch of attempts ran: a row's run columns.
type Provenance struct {
	CommitSHA  string `json:"commit_sha"`
	RunID      int64  `json:"github_run_id"`
	RunAttempt int    `json:"github_run_attempt"`
	Event      string `json:"event_name"`
	Ref        string `json:"git_ref"`
}

// Batch is what one run records: its attempts, all written or none.
type Batch struct {
	Provenance
	Attempts []Attempt `json:"attempts"`
	// RecordedAt is the rows' recorded_at; the zero time is the database's
	// clock (Postgres' CURRENT_TIMESTAMP, as Miles' own writer leaves it).
	RecordedAt time.Time `json:"recorded_at"`
	// Shard is the graph run's shard these attempts are of, with its times
	// (ShardTable); nil for a run or file-run.
	Shard *ShardRun `json:"shard,omitempty"`
}

// Row is one row of the table.
type Row struct {
	Attempt
	Provenance
	RecordedAt time.Time `json:"recorded_at"`
}

// Key is a row's idempotency key.
type Key struct {
	RunID             int64
	RunAttempt        int
	TestPath, Backend string
	Suite             string
	TestAttempt       int
}

func (k Key) String() string {
	return fmt.Sprintf("run %d attempt %d, %s (%s, %s) test attempt %d", k.RunID, k.RunAttempt, k.TestPath, k.Backend, k.Suite, k.TestAttempt)
}

// SampleQuery is what the calibration reads: PASS rows in [From, Before) of
// these events on Ref (rows of the event "local" match any ref, since a
// local run has none), the latest Limit per identity.
type SampleQuery struct {
	From, Before time.Time
	Events       []string
	Ref          string
	Limit        int
}

// Store is a runtime history.
type Store interface {
	// Write records a batch in one transaction: an attempt already there
	// with the same payload is a no-op, one with a different payload fails
	// the whole batch.
	Write(ctx context.Context, b Batch) error
	// Samples are the PASS attempts the calibration uses, ordered by
	// identity, then newest first (recorded_at, run id, run attempt, test
	// attempt, all descending), at most q.Limit per identity.
	Samples(ctx context.Context, q SampleQuery) ([]estimate.Sample, error)
	// Census counts what q keeps of the table at each of its filters.
	Census(ctx context.Context, q SampleQuery) (Census, error)
	// Rows are every row with recorded_at in [from, before) (the zero
	// times leave that end open), ordered by the idempotency key.
	Rows(ctx context.Context, from, before time.Time) ([]Row, error)
	// Shards are the shard runs with recorded_at in [from, before) (the
	// zero times leave that end open), in the order they were recorded;
	// none where the database has no ShardTable.
	Shards(ctx context.Context, from, before time.Time) ([]RecordedShard, error)
	// NoShardTable says that a write left its shard run out: a Postgres
	// database without ShardTable (history init adds it).
	NoShardTable() bool
	// Skipped says what the reads so far left out: rows that break the
	// attempt rule (see Attempt.Check), one line per read that skipped any.
	Skipped() []string
	// Close releases the connection.
	Close() error
}

// Validate checks a batch as Miles' writer does before it connects, and
// drops exact repeats within it: a key given twice with different payloads
// is an error.
func (b Batch) Validate() (Batch, error) {
	if err := b.Provenance.Check(); err != nil {
		return b, err
	}
	if b.Shard != nil {
		if err := b.Shard.Check(); err != nil {
			return b, err
		}
	}
	seen := map[Key]Attempt{}
	out := b
	out.Attempts = nil
	for _, a := range b.Attempts {
		if err := a.Check(); err != nil {
			return b, err
		}
		k := b.key(a)
		if prev, ok := seen[k]; ok {
			if prev != a {
				return b, fmt.Errorf("conflicting runtime attempts for idempotency key (%s)", k)
			}
			continue
		}
		seen[k] = a
		out.Attempts = append(out.Attempts, a)
	}
	return out, nil
}

func (b Batch) key(a Attempt) Key {
	return Key{b.RunID, b.RunAttempt, a.TestPath, a.Backend, a.Suite, a.TestAttempt}
}

// ConflictError is an attempt already in the table with a different payload.
type ConflictError struct {
	Key Key
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("the table already holds %s with a different status, seconds, estimate, commit, event or ref; the batch was rolled back and nothing was written", e.Key)
}
