package history

// The columns of Miles' table, in its order.
var columns = []string{"test_path", "backend", "suite", "test_attempt", "status", "elapsed_seconds", "estimated_seconds",
	"commit_sha", "github_run_id", "github_run_attempt", "event_name", "git_ref", "recorded_at"}

// keyColumns are the idempotency key, in the unique index's order.
var keyColumns = []string{"github_run_id", "github_run_attempt", "test_path", "backend", "suite", "test_attempt"}

// payloadColumns are what a replay of a key must repeat exactly (Miles'
// writer compares these; recorded_at is when it was written, not what).
var payloadColumns = []string{"status", "elapsed_seconds", "estimated_seconds", "commit_sha", "event_name", "git_ref"}

// postgresSchema is Miles' runtime_history_schema.sql: the table, its
// CHECK constraints, the unique idempotency index and the estimation index.
var postgresSchema = []string{`CREATE TABLE ci_test_runtime_attempts (
    test_path TEXT NOT NULL,
    backend TEXT NOT NULL,
    suite TEXT NOT NULL,
    test_attempt INTEGER NOT NULL CHECK (test_attempt >= 1),
    status TEXT NOT NULL CHECK (status IN ('PASS', 'FAIL', 'TIMEOUT')),
    elapsed_seconds DOUBLE PRECISION NOT NULL CHECK (elapsed_seconds >= 0),
    estimated_seconds DOUBLE PRECISION NOT NULL CHECK (estimated_seconds > 0),
    commit_sha TEXT NOT NULL,
    github_run_id BIGINT NOT NULL,
    github_run_attempt INTEGER NOT NULL CHECK (github_run_attempt >= 1),
    event_name TEXT NOT NULL,
    git_ref TEXT NOT NULL,
    recorded_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP
)`, uniqueIndex, estimationIndex}

// sqliteSchema is the same table in SQLite: STRICT, so a column holds only
// its type as in Postgres; recorded_at is ISO-8601 UTC text with six
// fraction digits (2026-08-01T12:00:00.000000Z), which sorts as time does.
var sqliteSchema = []string{`CREATE TABLE ci_test_runtime_attempts (
    test_path TEXT NOT NULL,
    backend TEXT NOT NULL,
    suite TEXT NOT NULL,
    test_attempt INTEGER NOT NULL CHECK (test_attempt >= 1),
    status TEXT NOT NULL CHECK (status IN ('PASS', 'FAIL', 'TIMEOUT')),
    elapsed_seconds REAL NOT NULL CHECK (elapsed_seconds >= 0),
    estimated_seconds REAL NOT NULL CHECK (estimated_seconds > 0),
    commit_sha TEXT NOT NULL,
    github_run_id INTEGER NOT NULL,
    github_run_attempt INTEGER NOT NULL CHECK (github_run_attempt >= 1),
    event_name TEXT NOT NULL,
    git_ref TEXT NOT NULL,
    recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z')
) STRICT`, uniqueIndex, estimationIndex}

const uniqueIndex = `CREATE UNIQUE INDEX ci_test_runtime_attempts_run_test_attempt_key
ON ci_test_runtime_attempts (github_run_id, github_run_attempt, test_path, backend, suite, test_attempt)`

const estimationIndex = `CREATE INDEX ci_test_runtime_attempts_estimation_idx
ON ci_test_runtime_attempts (test_path, backend, suite, recorded_at DESC)
WHERE status = 'PASS' AND event_name = 'schedule' AND git_ref = 'refs/heads/main'`

// sqliteTime is recorded_at's text in SQLite.
const sqliteTime = "2006-01-02T15:04:05.000000Z"
