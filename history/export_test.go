package history

import "time"

// SetDeadlines shortens the stores' deadlines for a test; the returned
// function restores them.
func SetDeadlines(connect, statement time.Duration) func() {
	c, s := connectTimeout, statementTimeout
	connectTimeout, statementTimeout = connect, statement
	return func() { connectTimeout, statementTimeout = c, s }
}

// SetBusy shortens SQLite's wait for a lock; the returned function restores it.
func SetBusy(d time.Duration) func() {
	old := sqliteBusy
	sqliteBusy = d
	return func() { sqliteBusy = old }
}
