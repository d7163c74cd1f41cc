package history

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/radixark/miles-ci/estimate"
)

// dialect is what differs between the two back ends: placeholders, how
// recorded_at is held, and how an error hides the connection's secret.
type dialect struct {
	name string
	// placeholder is the n-th (1-based) parameter.
	placeholder func(n int) string
	// timeArg is a time as the database compares recorded_at.
	timeArg func(t time.Time) any
	// mask hides the connection's password in an error.
	mask func(error) error
}

// sqlStore is a Store over database/sql.
type sqlStore struct {
	db *sql.DB
	d  dialect
	// where names the database in errors, without a password.
	where string
	// noun is what the store holds, in errors ("" is the runtime history).
	noun string
	// connect and statement are the deadlines (ConnectTimeout,
	// StatementTimeout; tests shorten them).
	connect, statement time.Duration
	// skipped are the reads' warnings (Skipped).
	skipped []string
	// noShardTable says a write left its shard run out (NoShardTable).
	noShardTable bool
}

// validSeconds is the attempt rule's seconds in SQL: false for NaN (above
// every number in Postgres) and Infinity, and for what SQLite would take.
var validSeconds = "(elapsed_seconds >= 0 AND elapsed_seconds <= " + strconv.Itoa(estimate.MaxSeconds) + ")"

func (s *sqlStore) Skipped() []string { return s.skipped }

// skips counts the rows one read left out.
type skips struct {
	where string
	// table is where the rows are (Table when empty), rule what they
	// break ("the attempt rule" when empty).
	table, rule string
	n           int
	first       string
}

func (k *skips) add(path string, run int64, err error) {
	if k.n == 0 {
		k.first = fmt.Sprintf("%s (run %d): %v", path, run, err)
	}
	k.n++
}

func (k *skips) lines() []string {
	if k.n == 0 {
		return nil
	}
	table, rule := cmp.Or(k.table, Table), cmp.Or(k.rule, "the attempt rule")
	return []string{fmt.Sprintf("%s: skipped %d row(s) that break %s, the first %s; fix or delete them in %s", k.where, k.n, rule, k.first, table)}
}

// rowsPerInsert bounds one INSERT's rows (13 parameters each; SQLite takes
// 32766, Postgres 65535).
const rowsPerInsert = 500

func (s *sqlStore) Close() error { return s.db.Close() }

func (s *sqlStore) fail(format string, err error) error {
	return fmt.Errorf(format, s.where, s.d.mask(err))
}

// checkTable refuses a database without Miles' table, or one whose table
// lacks a column: miles-ci writes rows, it does not migrate.
func (s *sqlStore) checkTable(ctx context.Context) error {
	return s.call(ctx, s.connect, "opening", func(ctx context.Context) error {
		rows, err := s.db.QueryContext(ctx, "SELECT "+strings.Join(columns, ", ")+" FROM "+Table+" LIMIT 0")
		if err != nil {
			return s.openError(err)
		}
		return rows.Close()
	})
}

func (s *sqlStore) Write(ctx context.Context, b Batch) error {
	b, err := b.Validate()
	if err != nil {
		return err
	}
	if len(b.Attempts) == 0 && b.Shard == nil {
		return nil
	}
	return s.call(ctx, s.statement, "writing to", func(ctx context.Context) error { return s.write(ctx, b) })
}

// write is Write's transaction.
func (s *sqlStore) write(ctx context.Context, b Batch) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.writeError(err)
	}
	for start := 0; start < len(b.Attempts); start += rowsPerInsert {
		chunk := b.Attempts[start:min(len(b.Attempts), start+rowsPerInsert)]
		query, args := s.insert(b, chunk)
		if _, err := tx.ExecContext(ctx, query, args...); err != nil {
			tx.Rollback()
			if k, ok := s.conflict(ctx, b); ok {
				return &ConflictError{Key: k}
			}
			return s.writeError(err)
		}
	}
	if b.Shard != nil {
		if err := s.writeShard(ctx, tx, b); err != nil {
			tx.Rollback()
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return s.writeError(err)
	}
	return nil
}

// insert is Miles' idempotent insert of many rows: a key already there
// keeps its row when the payload is the same, and otherwise its
// elapsed_seconds becomes NULL, which the NOT NULL constraint refuses, so
// the batch fails.
func (s *sqlStore) insert(b Batch, attempts []Attempt) (string, []any) {
	var q strings.Builder
	q.WriteString("INSERT INTO " + Table + " (" + strings.Join(columns, ", ") + ") VALUES ")
	args := make([]any, 0, len(attempts)*len(columns))
	at := s.recordedAt(b.RecordedAt)
	for i, a := range attempts {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(")
		for j := range columns {
			if j > 0 {
				q.WriteString(", ")
			}
			if j == len(columns)-1 && at == nil {
				q.WriteString("DEFAULT")
				continue
			}
			q.WriteString(s.d.placeholder(len(args) + 1))
			switch j {
			case 0:
				args = append(args, a.TestPath)
			case 1:
				args = append(args, a.Backend)
			case 2:
				args = append(args, a.Suite)
			case 3:
				args = append(args, a.TestAttempt)
			case 4:
				args = append(args, a.Status)
			case 5:
				args = append(args, a.ElapsedS)
			case 6:
				args = append(args, a.EstimatedS)
			case 7:
				args = append(args, b.CommitSHA)
			case 8:
				args = append(args, b.RunID)
			case 9:
				args = append(args, b.RunAttempt)
			case 10:
				args = append(args, b.Event)
			case 11:
				args = append(args, b.Ref)
			case 12:
				args = append(args, at)
			}
		}
		q.WriteString(")")
	}
	q.WriteString(" ON CONFLICT (" + strings.Join(keyColumns, ", ") + ") DO UPDATE SET elapsed_seconds = CASE WHEN ")
	for i, c := range payloadColumns {
		if i > 0 {
			q.WriteString(" AND ")
		}
		fmt.Fprintf(&q, "%s.%s IS NOT DISTINCT FROM EXCLUDED.%s", Table, c, c)
	}
	q.WriteString(" THEN " + Table + ".elapsed_seconds ELSE NULL END")
	return q.String(), args
}

// recordedAt is the recorded_at parameter; nil leaves it to the database
// (Postgres). SQLite's text is always miles-ci's, so every row has one form.
func (s *sqlStore) recordedAt(t time.Time) any {
	if t.IsZero() {
		if s.d.name != "sqlite" {
			return nil
		}
		t = time.Now()
	}
	return s.d.timeArg(t)
}

// conflict finds the first attempt of b that the table holds with another
// payload, after a failed write, to name it.
func (s *sqlStore) conflict(ctx context.Context, b Batch) (Key, bool) {
	rows, err := s.query(ctx, "github_run_id = "+s.d.placeholder(1)+" AND github_run_attempt = "+s.d.placeholder(2), b.RunID, b.RunAttempt)
	if err != nil {
		return Key{}, false
	}
	held := map[Key]Row{}
	for _, r := range rows {
		held[Key{r.RunID, r.RunAttempt, r.TestPath, r.Backend, r.Suite, r.TestAttempt}] = r
	}
	for _, a := range b.Attempts {
		k := b.key(a)
		r, ok := held[k]
		if ok && (r.Attempt != a || r.CommitSHA != b.CommitSHA || r.Event != b.Event || r.Ref != b.Ref) {
			return k, true
		}
	}
	return Key{}, false
}

func (s *sqlStore) Samples(ctx context.Context, q SampleQuery) ([]estimate.Sample, error) {
	if q.Limit < 1 {
		return nil, fmt.Errorf("limit must be positive, got %d", q.Limit)
	}
	if len(q.Events) == 0 {
		return nil, fmt.Errorf("no event to read samples of; give at least one (schedule)")
	}
	args := []any{q.Ref}
	events := make([]string, len(q.Events))
	for i, e := range q.Events {
		args = append(args, e)
		events[i] = s.d.placeholder(len(args))
	}
	args = append(args, s.d.timeArg(q.From), s.d.timeArg(q.Before), q.Limit)
	n := len(args)
	window := `status = 'PASS'
      AND event_name IN (` + strings.Join(events, ", ") + `)
      AND (git_ref = ` + s.d.placeholder(1) + ` OR event_name = 'local')
      AND recorded_at >= ` + s.d.placeholder(n-2) + `
      AND recorded_at < ` + s.d.placeholder(n-1)
	query := `WITH ranked AS (
    SELECT test_path, backend, suite, elapsed_seconds, github_run_id, github_run_attempt, test_attempt, recorded_at,
        ROW_NUMBER() OVER (
            PARTITION BY test_path, backend, suite
            ORDER BY recorded_at DESC, github_run_id DESC, github_run_attempt DESC, test_attempt DESC
        ) AS sample_rank
    FROM ` + Table + `
    WHERE ` + window + `
      AND ` + validSeconds + `
)
SELECT test_path, backend, suite, elapsed_seconds, github_run_id, github_run_attempt, test_attempt, recorded_at
FROM ranked
WHERE sample_rank <= ` + s.d.placeholder(n) + `
ORDER BY test_path, backend, suite, sample_rank`
	var out []estimate.Sample
	err := s.call(ctx, s.statement, "reading", func(ctx context.Context) error {
		var err error
		if out, err = s.samples(ctx, query, args); err != nil {
			return err
		}
		// The rows the rule left out of the ranking, counted to be named.
		var bad int64
		if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+Table+" WHERE "+window+" AND NOT "+validSeconds, args[:n-1]...).Scan(&bad); err != nil {
			return s.fail("reading the runtime history of %s: %w", err)
		}
		if bad > 0 {
			s.skipped = append(s.skipped, fmt.Sprintf("%s: %d PASS row(s) in the window have an elapsed_seconds that is not a number from 0 to %d (NaN, Infinity or more), so the calibration left them out; delete them from %s",
				s.where, bad, estimate.MaxSeconds, Table))
		}
		return nil
	})
	return out, err
}

func (s *sqlStore) samples(ctx context.Context, query string, args []any) ([]estimate.Sample, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, s.fail("reading the runtime history of %s: %w", err)
	}
	defer rows.Close()
	var out []estimate.Sample
	skip := skips{where: s.where}
	defer func() { s.skipped = append(s.skipped, skip.lines()...) }()
	for rows.Next() {
		var smp estimate.Sample
		var at any
		if err := rows.Scan(&smp.TestPath, &smp.Backend, &smp.Suite, &smp.ElapsedS, &smp.RunID, &smp.RunAttempt, &smp.TestAttempt, &at); err != nil {
			return nil, s.fail("reading the runtime history of %s: %w", err)
		}
		if smp.RecordedAt, err = scanTime(at); err != nil {
			return nil, fmt.Errorf("%s: recorded_at of %s: %w", s.where, smp.TestPath, err)
		}
		if err := (Attempt{TestPath: smp.TestPath, Backend: smp.Backend, Suite: smp.Suite, Status: Pass, ElapsedS: smp.ElapsedS, EstimatedS: 1, TestAttempt: max(smp.TestAttempt, 1)}).Check(); err != nil {
			skip.add(smp.TestPath, smp.RunID, err)
			continue
		}
		out = append(out, smp)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("reading the runtime history of %s: %w", err)
	}
	return out, nil
}

// window is the WHERE condition and its arguments of the rows recorded in
// [from, before), either end open when zero.
func (s *sqlStore) window(from, before time.Time) (string, []any) {
	var where []string
	var args []any
	if !from.IsZero() {
		args = append(args, s.d.timeArg(from))
		where = append(where, "recorded_at >= "+s.d.placeholder(len(args)))
	}
	if !before.IsZero() {
		args = append(args, s.d.timeArg(before))
		where = append(where, "recorded_at < "+s.d.placeholder(len(args)))
	}
	if len(where) == 0 {
		return "TRUE", nil
	}
	return strings.Join(where, " AND "), args
}

func (s *sqlStore) Rows(ctx context.Context, from, before time.Time) ([]Row, error) {
	cond, args := s.window(from, before)
	var out []Row
	err := s.call(ctx, s.statement, "reading", func(ctx context.Context) error {
		var err error
		out, err = s.query(ctx, cond, args...)
		return err
	})
	return out, err
}

// query reads whole rows that meet cond, in key order.
func (s *sqlStore) query(ctx context.Context, cond string, args ...any) ([]Row, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT "+strings.Join(columns, ", ")+" FROM "+Table+" WHERE "+cond+" ORDER BY "+strings.Join(keyColumns, ", "), args...)
	if err != nil {
		return nil, s.fail("reading the runtime history of %s: %w", err)
	}
	defer rows.Close()
	var out []Row
	skip := skips{where: s.where}
	defer func() { s.skipped = append(s.skipped, skip.lines()...) }()
	for rows.Next() {
		var r Row
		var at any
		if err := rows.Scan(&r.TestPath, &r.Backend, &r.Suite, &r.TestAttempt, &r.Status, &r.ElapsedS, &r.EstimatedS,
			&r.CommitSHA, &r.RunID, &r.RunAttempt, &r.Event, &r.Ref, &at); err != nil {
			return nil, s.fail("reading the runtime history of %s: %w", err)
		}
		if r.RecordedAt, err = scanTime(at); err != nil {
			return nil, fmt.Errorf("%s: recorded_at of %s: %w", s.where, r.TestPath, err)
		}
		if err := checkRow(r); err != nil {
			skip.add(r.TestPath, r.RunID, err)
			continue
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("reading the runtime history of %s: %w", err)
	}
	return out, nil
}

// scanTime reads recorded_at: a time from Postgres, ISO-8601 text from SQLite.
func scanTime(v any) (time.Time, error) {
	switch v := v.(type) {
	case time.Time:
		return v.UTC(), nil
	case string:
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return time.Time{}, fmt.Errorf("%q is not ISO-8601 UTC text (%s)", v, sqliteTime)
		}
		return t.UTC(), nil
	case []byte:
		return scanTime(string(v))
	}
	return time.Time{}, errors.New("recorded_at is neither a timestamp nor text")
}

// dollar is Postgres' placeholder $n.
func dollar(n int) string { return "$" + strconv.Itoa(n) }

// question is SQLite's numbered placeholder ?n (its $n would be a name,
// numbered by where it first appears).
func question(n int) string { return "?" + strconv.Itoa(n) }
