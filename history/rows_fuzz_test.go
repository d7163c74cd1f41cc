package history_test

import (
	"os"
	"testing"

	"github.com/radixark/miles-ci/history"
)

// FuzzParseRows: a kept batch is outside input (a results folder); any
// bytes give a batch or an error, never a panic.
func FuzzParseRows(f *testing.F) {
	seed, err := os.ReadFile("../usecase/runhistory/testdata/esttime/rows/run-101-1/history-rows.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"github_run_attempt":0}`))
	f.Add([]byte(`{} {}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := history.ParseRows("rows", data)
		if err == nil && b.RunAttempt < 1 {
			t.Errorf("accepted run attempt %d", b.RunAttempt)
		}
	})
}
