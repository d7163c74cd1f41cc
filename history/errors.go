package history

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// openError says why a store could not be read, as what it is: locked,
// read-only, unreachable, a refused login, a missing database, table or
// column, or not a database; only a missing table is for history init.
func (s *sqlStore) openError(err error) error {
	masked := s.d.mask(err)
	if hint := s.hint(err); hint != "" {
		return fmt.Errorf("%s %s (%v)", s.where, hint, masked)
	}
	return fmt.Errorf("%s has no usable table %s (%v); create it with miles-ci history init --db (Miles' schema), or point --db at the database that holds it",
		s.where, Table, masked)
}

// hint is what err says of the store, "" for a missing table.
func (s *sqlStore) hint(err error) string {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch {
		case pg.Code == "42P01":
			return ""
		case pg.Code == "42703":
			return "has a table " + Table + " without a column of Miles' schema; miles-ci alters no table, so point --db at Miles' table"
		case pg.Code == "28P01" || pg.Code == "28000":
			return "refused the login (authentication failed); check the user, and the password in " + EnvDB + " or ~/.pgpass"
		case pg.Code == "3D000":
			return "names a database the server does not have; create it, or fix the URL"
		case pg.Code == "42501":
			return "does not let this role read " + Table + "; grant it SELECT (and INSERT, UPDATE to record)"
		case strings.HasPrefix(pg.Code, "08"), strings.HasPrefix(pg.Code, "57P"):
			return "closed the connection; is the server up?"
		}
		return "cannot be read"
	}
	var conn *pgconn.ConnectError
	if errors.As(err, &conn) {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return "refused the connection (nothing listens there); is the server running, and the host and port right?"
		}
		return "cannot be reached; is the server running, and the URL right?"
	}
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		switch lite.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return "is locked by another process (another miles-ci writing to it?); run again when it ends"
		case sqlite3.SQLITE_READONLY:
			return "cannot be written: the file or its folder is read-only; give --db a history this user can write"
		case sqlite3.SQLITE_NOTADB:
			return "is not a SQLite database; give --db the history file"
		case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH:
			return "cannot be opened (its permissions, or its folder's)"
		}
		if strings.Contains(lite.Error(), "no such column") {
			return "has a table " + Table + " without a column of Miles' schema; miles-ci alters no table, so point --db at Miles' table"
		}
		if strings.Contains(lite.Error(), "no such table") {
			return ""
		}
		return "cannot be read"
	}
	return ""
}

// writeError is a failed write, its cause named where it is the store's.
func (s *sqlStore) writeError(err error) error {
	if hint := s.hint(err); hint != "" && hint != "cannot be read" {
		return fmt.Errorf("writing the runtime history to %s: it %s (%v); nothing was written", s.where, hint, s.d.mask(err))
	}
	return s.fail("writing the runtime history to %s: %w; nothing was written", err)
}
