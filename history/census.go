package history

import (
	"context"
	"fmt"
	"strings"
)

// Census counts the table's rows as a sample query filters them, one step
// after another (window, events, ref, status), so an answer built on few
// samples can say where the others went.
type Census struct {
	// Rows are every attempt in the table.
	Rows int `json:"rows"`
	// InWindow are the rows recorded in [From, Before); Later those
	// recorded at or after Before (today's runs, by default).
	InWindow int `json:"in_window"`
	Later    int `json:"later"`
	// OfEvents are those of the query's events.
	OfEvents int `json:"of_events"`
	// OnRef are those on the query's ref (a local row is on every ref).
	OnRef int `json:"on_ref"`
	// Passed are those with status PASS: what the samples come from.
	Passed int `json:"passed"`
	// Local are the window's rows of local runs, whether or not the query
	// reads them (events local).
	Local int `json:"local"`
}

// Census counts what q keeps of the table at each filter. q.Limit is not
// used: the per-identity cut is the caller's to count.
func (s *sqlStore) Census(ctx context.Context, q SampleQuery) (Census, error) {
	if len(q.Events) == 0 {
		return Census{}, fmt.Errorf("no event to count samples of; give at least one (schedule)")
	}
	args := []any{q.Ref, s.d.timeArg(q.From), s.d.timeArg(q.Before)}
	events := make([]string, len(q.Events))
	for i, e := range q.Events {
		args = append(args, e)
		events[i] = s.d.placeholder(len(args))
	}
	win := "recorded_at >= " + s.d.placeholder(2) + " AND recorded_at < " + s.d.placeholder(3)
	ev := win + " AND event_name IN (" + strings.Join(events, ", ") + ")"
	ref := ev + " AND (git_ref = " + s.d.placeholder(1) + " OR event_name = 'local')"
	count := func(cond string) string { return "COALESCE(SUM(CASE WHEN " + cond + " THEN 1 ELSE 0 END), 0)" }
	query := "SELECT COUNT(*), " + strings.Join([]string{count(win), count(ev), count(ref), count(ref + " AND status = 'PASS'"), count(win + " AND event_name = 'local'"), count("recorded_at >= " + s.d.placeholder(3))}, ", ") + " FROM " + Table
	var n [7]int64
	err := s.call(ctx, s.statement, "reading", func(ctx context.Context) error {
		if err := s.db.QueryRowContext(ctx, query, args...).Scan(&n[0], &n[1], &n[2], &n[3], &n[4], &n[5], &n[6]); err != nil {
			return s.fail("counting the runtime history of %s: %w", err)
		}
		return nil
	})
	return Census{Rows: int(n[0]), InWindow: int(n[1]), OfEvents: int(n[2]), OnRef: int(n[3]), Passed: int(n[4]), Local: int(n[5]), Later: int(n[6])}, err
}
