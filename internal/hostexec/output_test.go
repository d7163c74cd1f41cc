package hostexec

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOutput(t *testing.T) {
	ctx := context.Background()
	res, err := Output(ctx, []string{"sh", "-c", "cat; echo out; echo err >&2; exit 3"}, 10*time.Second, 100)
	if err != nil || res.ExitCode != 3 || string(res.Stdout) != "out\n" || string(res.Stderr) != "err\n" {
		t.Errorf("wanted exit 3 with out and err and no stdin, got %+v %v", res, err)
	}
	if _, err := Output(ctx, []string{"/nonexistent/miles-ci-tool"}, time.Second, 100); err == nil {
		t.Error("wanted an error for a missing program, got none")
	}
	if _, err := Output(ctx, []string{"miles-ci-no-such-tool"}, time.Second, 100); !errors.Is(err, ErrNotFound) {
		t.Errorf("wanted ErrNotFound, got %v", err)
	}
	if _, err := Output(ctx, nil, time.Second, 100); err == nil || err.Error() != "empty command" {
		t.Errorf("wanted %q, got %v", "empty command", err)
	}
	res, err = Output(ctx, []string{"sh", "-c", "yes"}, 10*time.Second, 1000)
	if want := "sh printed more than 1000 bytes"; err == nil || err.Error() != want || len(res.Stdout) != 1000 {
		t.Errorf("wanted %q with 1000 bytes kept, got %v with %d", want, err, len(res.Stdout))
	}
	start := time.Now()
	_, err = Output(ctx, []string{"sh", "-c", "sleep 30"}, 200*time.Millisecond, 100)
	if want := "sh did not end within 200ms"; err == nil || err.Error() != want {
		t.Errorf("wanted %q, got %v", want, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("wanted the timeout to end the command, it took %s", d)
	}
	if _, err := Output(ctx, []string{"sh", "-c", "kill -9 $$"}, 10*time.Second, 100); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("wanted an error for a command ended by a signal, got %v", err)
	}
}

// TestOutputKillsTheGroup: a hung tool's children die at the bound too
// (issue 38: a hung nvidia-smi's child outlived it), and a child a tool
// leaves behind when it ends is killed with it.
func TestOutputKillsTheGroup(t *testing.T) {
	for _, tc := range []struct{ name, script string }{
		{"a hung tool", "sleep 60 & echo $! >\"$1\"; wait"},
		{"a tool that leaves a child", "(trap '' HUP; exec sleep 60) >/dev/null 2>&1 & echo $! >\"$1\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pidFile := t.TempDir() + "/pid"
			Output(context.Background(), []string{"sh", "-c", tc.script, "sh", pidFile}, 300*time.Millisecond, 100)
			b, err := os.ReadFile(pidFile)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil || pid <= 0 {
				t.Fatalf("the tool wrote no child pid: %q %v", b, err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for syscall.Kill(pid, 0) == nil {
				if time.Now().After(deadline) {
					syscall.Kill(pid, syscall.SIGKILL)
					t.Fatalf("wanted the tool's child %d killed with it, it still runs", pid)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}
