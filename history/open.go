package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // the "sqlite" database/sql driver, pure Go
)

// EnvDB is the environment variable that names the history database (a
// postgres:// URL or a SQLite file), so a password stays out of argv.
const EnvDB = "MILES_CI_HISTORY_DB"

// DefaultPath is the SQLite file used when no database is named, below
// the user's cache folder.
func DefaultPath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache folder for the runtime history (%w); give --db PATH or set %s", err, EnvDB)
	}
	return filepath.Join(dir, "miles-ci", "history.db"), nil
}

// IsPostgres reports whether db names a Postgres database (a postgres://
// or postgresql:// URL) rather than a SQLite file.
func IsPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// keywordDSN matches a libpq key=value connection string
// ("host=h user=u password=p"), which Postgres clients take but miles-ci
// would read as a SQLite file name, creating a file named after the password
// and printing it.
var keywordDSN = regexp.MustCompile(`^\s*(host|hostaddr|port|dbname|user|password|sslmode|service|passfile)\s*=`)

// checkNotKeywordDSN refuses a store that is a key=value connection
// string, without showing it (it may hold a password).
func checkNotKeywordDSN(db string) error {
	if keywordDSN.MatchString(db) {
		return errors.New("the store is a key=value connection string, which miles-ci does not read (and does not show: it may hold a password); give a postgres://USER@HOST:PORT/DB URL, the password in PGPASSWORD or ~/.pgpass, or a SQLite file")
	}
	return nil
}

// Redact is db as it may be shown: a URL's password replaced by xxxxx.
func Redact(db string) string {
	if !IsPostgres(db) {
		return db
	}
	u, err := url.Parse(db)
	if err != nil {
		return "a postgres:// URL that does not parse"
	}
	return u.Redacted()
}

// HasPassword reports whether db carries a password (a URL's, or a
// password= parameter), which then must not be on a command line.
func HasPassword(db string) bool {
	if !IsPostgres(db) {
		return false
	}
	u, err := url.Parse(db)
	if err != nil {
		return true
	}
	_, ok := u.User.Password()
	return ok || u.Query().Has("password")
}

// Open opens the history db names for writing: a postgres:// URL, whose
// table must exist (see Init), or a SQLite file, which is created with the
// table when it does not exist yet.
func Open(ctx context.Context, db string) (Store, error) {
	return open(ctx, db, false)
}

// OpenRead opens the history db names for reading only: a SQLite file must
// exist and is never created or changed (no journal mode is set on it).
func OpenRead(ctx context.Context, db string) (Store, error) {
	return open(ctx, db, true)
}

func open(ctx context.Context, db string, read bool) (Store, error) {
	if IsPostgres(db) {
		s, err := openPostgres(db)
		if err != nil {
			return nil, err
		}
		if err := s.checkTable(ctx); err != nil {
			s.Close()
			return nil, err
		}
		return s, nil
	}
	missing, err := checkSQLitePath(db, read)
	if err != nil {
		return nil, err
	}
	s, err := openSQLite(db, read)
	if err != nil {
		return nil, err
	}
	if missing {
		if err := s.create(ctx, append(slices.Clone(sqliteSchema), shardSchema(false)...)); err != nil {
			s.Close()
			return nil, err
		}
	}
	if err := s.checkTable(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// checkSQLitePath refuses a SQLite path miles-ci would misread or
// overwrite: a symlink (named, never followed), something not a regular
// file, an empty file (not a database; opening it would write one), and for
// a read a file that does not exist. missing says a writer creates it.
func checkSQLitePath(path string, read bool) (missing bool, err error) {
	if path == "" {
		return false, fmt.Errorf("no SQLite file named; give --db PATH")
	}
	if err := checkNotKeywordDSN(path); err != nil {
		return false, err
	}
	info, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && read:
		return false, fmt.Errorf("the runtime history %s does not exist; record a run first (--record), import one (miles-ci history import), or give --db the history to read", path)
	case errors.Is(err, fs.ErrNotExist):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("the runtime history %s: %w", path, err)
	case info.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return false, fmt.Errorf("the runtime history %s is a symlink to %s; miles-ci follows no link to a database, so give --db the file itself", path, target)
	case !info.Mode().IsRegular():
		return false, fmt.Errorf("the runtime history %s is not a regular file; give --db a SQLite file", path)
	case info.Size() == 0:
		return false, fmt.Errorf("the runtime history %s %w, and miles-ci rewrites no file it did not make; remove it (miles-ci then creates the database), create the table in it (miles-ci history init), or give another --db", path, errEmpty)
	}
	return false, nil
}

// errEmpty is a SQLite path that is an empty file, which only history init
// turns into a database.
var errEmpty = errors.New("is an empty file, not a SQLite database")

// sqliteURI is the driver's name of path: a file: URI, with the characters
// a URI reads (%, ?, #) escaped, so that a path is only ever a path
// (q#frag.db wrote to q).
func sqliteURI(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return "file:" + strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(filepath.ToSlash(abs)), nil
}

// ErrTableExists is Init on a database that already holds the table.
var ErrTableExists = errors.New("the table " + Table + " exists already, and so does " + ShardTable + "; miles-ci alters no table it finds, so nothing was done")

// Init creates Miles' table and its indexes, and miles-ci's shard table
// (ShardTable), in a database that has none, and says what it created. A
// database that holds Miles' table gains the shard table alone, and is
// otherwise left as it is; one that holds both is ErrTableExists.
func Init(ctx context.Context, db string) (string, error) {
	var s *sqlStore
	var err error
	schema := sqliteSchema
	if IsPostgres(db) {
		s, err = openPostgres(db)
		schema = postgresSchema
	} else {
		if _, err := checkSQLitePath(db, false); err != nil && !errors.Is(err, errEmpty) {
			return "", err
		}
		s, err = openSQLite(db, false)
	}
	if err != nil {
		return "", err
	}
	defer s.Close()
	shards := shardSchema(IsPostgres(db))
	switch err := s.checkTable(ctx); {
	case err == nil:
		var has bool
		if err := s.call(ctx, s.connect, "opening", func(ctx context.Context) error { has = s.hasShardTable(ctx, s.db); return nil }); err != nil {
			return "", err
		}
		if has {
			return "", fmt.Errorf("%s: %w", s.where, ErrTableExists)
		}
		return ShardTable + " beside the " + Table + " already there", s.create(ctx, shards)
	case errors.Is(err, ErrStalled) || errors.Is(err, ErrInterrupted):
		return "", err
	}
	return Table + " and " + ShardTable, s.create(ctx, append(slices.Clone(schema), shards...))
}

// create runs the schema in one transaction.
func (s *sqlStore) create(ctx context.Context, schema []string) error {
	return s.call(ctx, s.connect, "creating the table in", func(ctx context.Context) error { return s.createTx(ctx, schema) })
}

func (s *sqlStore) createTx(ctx context.Context, schema []string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail("%s: %w", err)
	}
	for _, stmt := range schema {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			tx.Rollback()
			return s.fail("creating the table in %s: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return s.fail("creating the table in %s: %w", err)
	}
	return nil
}

func openSQLite(path string, read bool) (*sqlStore, error) {
	return openSQLiteWAL(path, read, true)
}

// openSQLiteWAL is openSQLite; wal sets a writer's journal to WAL (a file
// another program shares is left in its own journal mode).
func openSQLiteWAL(path string, read, wal bool) (*sqlStore, error) {
	if path == "" {
		return nil, fmt.Errorf("no SQLite file named; give --db PATH")
	}
	if !read {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("the runtime history %s: %w", path, err)
		}
	}
	uri, err := sqliteURI(path)
	if err != nil {
		return nil, fmt.Errorf("the runtime history %s: %w", path, err)
	}
	// One writer at a time, waiting up to 10 s for another miles-ci's; in
	// WAL mode synchronous=NORMAL syncs at checkpoints, not at each commit
	// (a power cut may lose the last batches, never corrupt the file). A
	// reader sets no journal mode: that would write to the file.
	busy := fmt.Sprintf("?_pragma=busy_timeout(%d)", sqliteBusy.Milliseconds())
	params := busy + "&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	if !wal {
		params = busy + "&_txlock=immediate"
	}
	if read {
		params = busy + "&_pragma=query_only(true)"
	}
	db, err := sql.Open("sqlite", uri+params)
	if err != nil {
		return nil, fmt.Errorf("the runtime history %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	noMask := func(err error) error { return err }
	return &sqlStore{db: db, where: path, connect: connectTimeout, statement: statementTimeout, d: dialect{name: "sqlite", placeholder: question,
		timeArg: func(t time.Time) any { return t.UTC().Format(sqliteTime) }, mask: noMask}}, nil
}

func openPostgres(dsn string) (*sqlStore, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("the database URL does not parse; give postgres://USER@HOST:PORT/DB (a password in $%s, $%s or ~/.pgpass, never on the command line)", EnvDB, EnvGateDB)
	}
	secrets := []string{dsn}
	if p, ok := u.User.Password(); ok && p != "" {
		secrets = append(secrets, p, url.QueryEscape(p), url.PathEscape(p))
	}
	if p := u.Query().Get("password"); p != "" {
		secrets = append(secrets, p)
	}
	mask := func(err error) error {
		if err == nil {
			return nil
		}
		text := err.Error()
		for _, s := range secrets {
			text = strings.ReplaceAll(text, s, "xxxxx")
		}
		return errors.New(text)
	}
	// What url.Parse takes pgx may not (a port out of range, an unknown
	// sslmode): said here, not later as missing tables.
	if _, err := pgconn.ParseConfig(dsn); err != nil {
		return nil, mask(fmt.Errorf("the database URL %s does not parse (%w); give postgres://USER@HOST:PORT/DB", Redact(dsn), err))
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, mask(fmt.Errorf("the history database %s: %w", Redact(dsn), err))
	}
	return &sqlStore{db: db, where: Redact(dsn), connect: connectTimeout, statement: statementTimeout, d: dialect{name: "postgres", placeholder: dollar,
		timeArg: func(t time.Time) any { return t.UTC() }, mask: mask}}, nil
}
