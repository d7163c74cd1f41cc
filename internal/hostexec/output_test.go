package hostexec

import (
	"context"
	"errors"
	"strings"
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
