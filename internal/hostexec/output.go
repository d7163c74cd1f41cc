package hostexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// ErrNotFound is the error (under errors.Is) of a command whose program is
// not on PATH.
var ErrNotFound = exec.ErrNotFound

// Result is what a command run for its output printed, and its exit code.
type Result struct {
	ExitCode       int
	Stdout, Stderr []byte
}

// Output runs argv (no shell) with stdin from /dev/null, ends it after
// timeout, and returns its exit code and its stdout and stderr. A command
// that prints more than max bytes on either is ended and is an error, as are
// one that could not start (ErrNotFound when its program is not on PATH),
// one that ran past timeout, and one ended by a signal.
func Output(ctx context.Context, argv []string, timeout time.Duration, max int) (Result, error) {
	if len(argv) == 0 {
		return Result{}, fmt.Errorf("empty command")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	// The command runs in a process group of its own, and the whole group
	// is killed at the bound and once the command ends: a hung tool's
	// children (nvidia-smi's helpers, a shell's sleep) die with it, never
	// outliving the bound.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
	// A child that keeps the pipes open past the command's end (a daemon it
	// started) does not hold Output past this.
	cmd.WaitDelay = time.Second
	stdout, stderr := &capped{max: max, cancel: cancel}, &capped{max: max, cancel: cancel}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	if cmd.Process != nil {
		killGroup(cmd)
	}
	res := Result{Stdout: stdout.buf.Bytes(), Stderr: stderr.buf.Bytes()}
	switch {
	case stdout.over || stderr.over:
		return res, fmt.Errorf("%s printed more than %d bytes", argv[0], max)
	case ctx.Err() == context.DeadlineExceeded:
		return res, fmt.Errorf("%s did not end within %s", argv[0], timeout)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.Exited() {
		res.ExitCode = exit.ExitCode()
		return res, nil
	}
	return res, err
}

// killGroup kills the command's process group (its pid is the group's id).
func killGroup(cmd *exec.Cmd) error {
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// capped keeps the first max bytes written to it and ends the command
// (cancel) when more come.
type capped struct {
	buf    bytes.Buffer
	max    int
	over   bool
	cancel func()
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); len(p) > room {
		c.buf.Write(p[:max(room, 0)])
		c.over = true
		c.cancel()
		return 0, fmt.Errorf("output over %d bytes", c.max)
	}
	return c.buf.Write(p)
}
