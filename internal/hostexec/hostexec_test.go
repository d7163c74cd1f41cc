package hostexec

import (
	"context"
	"testing"
)

func TestRun(t *testing.T) {
	if _, _, err := Run(context.Background(), t.TempDir(), nil); err == nil || err.Error() != "empty command" {
		t.Errorf("wanted %q, got %v", "empty command", err)
	}
	if _, _, err := Run(context.Background(), t.TempDir(), []string{"/nonexistent/miles-ci-git"}); err == nil {
		t.Error("wanted an error for a missing program, got none")
	}
	code, out, err := Run(context.Background(), t.TempDir(), []string{"sh", "-c", "echo out; echo err >&2; exit 3"})
	if err != nil || code != 3 || out != "out\nerr\n" {
		t.Errorf("wanted exit 3 with out and err, got %d %q %v", code, out, err)
	}
}
