// Package hostexec runs a command on the host from an argv list, never
// through a shell. It is the one runner of host processes the decision
// packages can be handed (deps' ROCm patch check runs git through it from the
// CLI and from its tests); stage runs exec in containers instead.
package hostexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
)

// Run runs argv in dir and returns its exit code and its combined stdout and
// stderr. A command that could not start, or ended by a signal, is an error.
func Run(ctx context.Context, dir string, argv []string) (exitCode int, output string, err error) {
	if len(argv) == 0 {
		return 0, "", fmt.Errorf("empty command")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.Exited() {
		return exit.ExitCode(), out.String(), nil
	}
	if err != nil {
		return 0, "", err
	}
	return 0, out.String(), nil
}
