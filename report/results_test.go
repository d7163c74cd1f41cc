package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseResultsErrors(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"not JSON", "{", "summary.json is not a test run's summary.json: unexpected EOF"},
		{"two values", `{"suite":"s"} {}`, "summary.json holds more than one JSON value; it must be one summary.json object"},
		{"no suite", `{}`, "summary.json names no suite; it must be the summary.json a test run wrote"},
		{"bad shard", `{"suite":"s","shard":{"id":3,"size":3}}`, "summary.json: shard 3 of 3 is not a shard; ids run from 0 to size-1"},
		{"bad status", `{"suite":"s","tests":[{"file":"a.py","status":"ok"}]}`, `summary.json: test 1 ("a.py") has status "ok"; a status is pass, fail, timeout or not-run`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseResults("summary.json", []byte(tt.data))
			if err == nil || err.Error() != tt.want {
				t.Fatalf("wanted %q, got %v", tt.want, err)
			}
		})
	}
}

// FuzzParseResults: any summary.json is read or refused, never a panic, and
// what is read names its suite.
func FuzzParseResults(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "results", "summary.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"suite":"s","shard":null,"tests":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseResults("summary.json", data)
		if err != nil {
			return
		}
		if r.Suite == "" {
			t.Fatal("read a summary.json that names no suite")
		}
	})
}

// TestReadResultsRefusesWhatCannotBeRead: summary.json is read like every
// other outside file, so a FIFO there fails at once instead of hanging, and a
// missing one is named with the fix.
func TestReadResultsRefusesWhatCannotBeRead(t *testing.T) {
	fifoDir, missingDir := t.TempDir(), t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifoDir, "summary.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, dir, want string }{
		{"fifo", fifoDir, "--results: " + filepath.Join(fifoDir, "summary.json") + " is a named pipe (FIFO), not a regular file; give the results folder a test run wrote"},
		{"missing", missingDir, "--results: " + filepath.Join(missingDir, "summary.json") + " does not exist; give the results folder a test run wrote"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				_, err := ReadResults(tt.dir)
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || err.Error() != tt.want {
					t.Fatalf("wanted %q, got %v", tt.want, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("ReadResults blocked")
			}
		})
	}
}

// TestParseResultsConsistency checks that a summary.json whose verdict its
// own facts contradict (an edited or forged one) is refused.
func TestParseResultsConsistency(t *testing.T) {
	const head = `{"hw":"cuda","suite":"s","tests":[{"file":"a.py","status":"%s"}],`
	for _, tc := range []struct {
		name, json, err string
	}{
		{"a pass", fmt.Sprintf(head, "pass") + `"verdict":"passed","passed":true,"exit_code":0}`, ""},
		{"an old summary without a verdict", fmt.Sprintf(head, "fail") + `"passed":false,"exit_code":1}`, ""},
		{"passed with a failed file", fmt.Sprintf(head, "fail") + `"verdict":"passed","passed":true,"exit_code":0}`, "it passed, but a.py is fail"},
		{"passed with exit 255", fmt.Sprintf(head, "pass") + `"passed":true,"exit_code":255}`, "it passed with exit code 255"},
		{"passed against the verdict", fmt.Sprintf(head, "pass") + `"verdict":"failed","passed":true,"exit_code":0}`, "passed is true but the verdict is failed"},
		{"an unknown verdict", fmt.Sprintf(head, "pass") + `"verdict":"green","passed":true}`, `verdict "green" is not`},
		{"inconsistent without a reason", fmt.Sprintf(head, "pass") + `"verdict":"inconsistent","passed":false}`, "no inconsistency is named"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseResults("summary.json", []byte(tc.json))
			if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("wanted %q, got %v", tc.err, err)
			}
		})
	}
}
