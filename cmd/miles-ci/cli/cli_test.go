package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestVersion(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "dagger.json"))
	if err != nil {
		t.Fatal(err)
	}
	var mod struct {
		EngineVersion string `json:"engineVersion"`
	}
	if err := json.Unmarshal(data, &mod); err != nil {
		t.Fatal(err)
	}
	if mod.EngineVersion != DaggerEngineVersion {
		t.Errorf("dagger.json engineVersion %q and DaggerEngineVersion %q differ: keep them equal", mod.EngineVersion, DaggerEngineVersion)
	}
	for _, arg := range []string{"--version", "version"} {
		code, stdout, _ := runCLI(t, nil, arg)
		want := "miles-ci (devel) (module github.com/radixark/miles-ci)\nDagger engine " + DaggerEngineVersion + " (dagger.json engineVersion)\n"
		if code != 0 || stdout != want {
			t.Errorf("%s: wanted exit 0 and %q, got %d and %q", arg, want, code, stdout)
		}
	}
}

// TestHelpLayout checks that every subcommand prints the same -h layout on
// stdout and exits 0.
func TestHelpLayout(t *testing.T) {
	for name := range commands {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, nil, name, "-h")
			if code != 0 || stderr != "" {
				t.Fatalf("wanted exit 0 and no stderr, got %d and %q", code, stderr)
			}
			lines := strings.Split(stdout, "\n")
			if !strings.HasPrefix(lines[0], "usage: miles-ci "+name+" ") {
				t.Errorf("wanted the usage line first, got %q", lines[0])
			}
			if !strings.Contains(stdout, "\nflags:\n  -h, --help                  show this help and exit\n") {
				t.Errorf("wanted the flag table, got %q", stdout)
			}
		})
	}
}

// TestOutputFilesNeverBlock: --github-output and --github-step-summary
// naming a FIFO that nothing reads fail at once instead of hanging the step.
func TestOutputFilesNeverBlock(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--github-output", "--github-step-summary"} {
		t.Run(flag, func(t *testing.T) {
			type result struct {
				code   int
				stderr string
			}
			done := make(chan result, 1)
			go func() {
				code, _, stderr := runCLI(t, nil, "image", "--backend", "cuda", flag, fifo)
				done <- result{code, stderr}
			}()
			select {
			case r := <-done:
				want := "::error::" + flag + " " + fifo + " is a named pipe (FIFO) that nothing reads"
				if r.code != 1 || !strings.HasPrefix(r.stderr, want) {
					t.Fatalf("wanted exit 1 and %q..., got %d and %q", want, r.code, r.stderr)
				}
			case <-time.After(5 * time.Second):
				t.Fatal(flag + " blocked on a FIFO")
			}
		})
	}
}
