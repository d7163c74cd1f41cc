package deps

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
)

// HostRunner runs argv on the host with os/exec (never through a shell).
func HostRunner(ctx context.Context, dir string, argv []string) (StepResult, error) {
	if len(argv) == 0 {
		return StepResult{}, fmt.Errorf("empty command")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.Exited() {
		return StepResult{ExitCode: exit.ExitCode(), Output: out.String()}, nil
	}
	if err != nil {
		return StepResult{}, err
	}
	return StepResult{Output: out.String()}, nil
}
