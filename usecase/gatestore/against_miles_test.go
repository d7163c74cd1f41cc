package gatestore_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/history/historytest"
)

// TestAgainstMiles compares `miles-ci gate` with Miles' own evaluate_gate on
// generated declarations, records and SQLite stores (testdata/diffgate.py):
// set MILES_CI_REAL_MILES to a Miles checkout (its tests/ci is copied into a
// scratch folder; nothing is written to it), and MILES_CI_GATE_CASES to the
// number of cases (default 300). Every field of every coordinate and every
// file's verdict must agree; with MILES_CI_TEST_POSTGRES, also against the
// same rows in Postgres.
func TestAgainstMiles(t *testing.T) {
	miles := os.Getenv("MILES_CI_REAL_MILES")
	if miles == "" {
		t.Skip("MILES_CI_REAL_MILES is not set: no Miles checkout to compare with")
	}
	if _, err := os.Stat(filepath.Join(miles, "tests", "ci", "metric_history", "gate.py")); err != nil {
		t.Skipf("%s has no metric-history gate: %v", miles, err)
	}
	cases := os.Getenv("MILES_CI_GATE_CASES")
	if cases == "" {
		cases = "300"
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "miles-ci")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/miles-ci").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	work := filepath.Join(dir, "miles")
	if err := os.MkdirAll(filepath.Join(work, "tests"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-r", filepath.Join(miles, "tests", "ci"), filepath.Join(work, "tests", "ci")).CombinedOutput(); err != nil {
		t.Fatalf("copying tests/ci: %v\n%s", err, out)
	}
	script, _ := filepath.Abs(filepath.Join("testdata", "diffgate.py"))
	args := []string{script, "--bin", bin, "--cases", cases, "--state", filepath.Base(miles)}
	if pg, ok := historytest.DBs(t)["postgres"]; ok {
		// The same rows in Miles' Postgres tables must give the same verdicts.
		args = append(args, "--postgres", pg(t))
	}
	cmd := exec.Command("python3", args...)
	cmd.Dir = work
	out, err := cmd.CombinedOutput()
	t.Logf("%s", strings.TrimSpace(string(out)))
	if err != nil {
		t.Errorf("miles-ci gate differs from Miles' evaluate_gate: %v", err)
	}
}
