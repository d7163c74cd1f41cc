// Package checkoutpy is the checkout planner: it runs a Miles checkout's own
// tests/ci Python (run_suite.py --list-only, python -m tests.ci.ci_policy,
// python -m tests.ci.file_run, its test registry) through miles-ci's driver,
// many cases in one interpreter, and reads the answers back. usecase's
// --planner checkout and verify use it; it decides nothing itself.
package checkoutpy

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/radixark/miles-ci/policy"
)

// driverSource is miles-ci's own driver of a checkout's tests/ci code: it
// runs the checkout's entry points as its workflows do, many cases in one
// interpreter (see the file's docstring).
//
//go:embed checkout_driver.py
var driverSource string

// MinPython is the oldest Python the checkout planner runs: Miles' tests/ci
// code uses 3.10 syntax (X | None, match), and its CI runs 3.11.
const MinPython = "3.10"

// Checkout runs a Miles checkout's own tests/ci code. It is untrusted code:
// it runs in the checkout folder with a timeout, a minimal environment (no
// token, no secret of the caller's), bounded output, and nothing written to
// the checkout (no bytecode).
type Checkout struct {
	// Root is the checkout's absolute folder, as miles-ci reads it.
	Root string
	// Python runs the driver: a local interpreter (NewCheckout) or the
	// Dagger module's Python 3.11 container.
	Python Interpreter
	// Timeout bounds one call of the driver; 0 is two minutes plus 200 ms a case.
	Timeout time.Duration
}

// Interpreter runs miles-ci's driver beside a checkout.
type Interpreter interface {
	// Run runs the driver (Python source) with the checkout as its working
	// folder; request builds its stdin from the checkout's folder and a
	// writable scratch folder as the driver sees them. It returns what the
	// driver printed; err is a failure to run it at all (a non-zero exit is not).
	Run(ctx context.Context, driver string, request func(root, scratch string) ([]byte, error)) (stdout, stderr []byte, err error)
	// String names the interpreter, e.g. /usr/bin/python3.
	String() string
}

// Case is one question to the checkout's code, as its workflow asks it.
type Case struct {
	// Script is a repo-relative script run as python SCRIPT ARGV...
	Script string `json:"script,omitempty"`
	// Module is a module run as python -m MODULE with Env set.
	Module string `json:"module,omitempty"`
	// Argv are the script's or module's arguments.
	Argv []string `json:"argv,omitempty"`
	// Env are the environment variables the workflow step sets (GITHUB_OUTPUT
	// is always a fresh file of the driver's).
	Env map[string]string `json:"env,omitempty"`
	// Registry asks for the checkout's collect_tests(discover_ci_files()).
	Registry bool `json:"registry,omitempty"`
	// ChangedFilesEnv names the variable that holds the path of a fresh
	// file of the driver's with Diff in it (no file when Diff is nil), as
	// the resolve-ci-policy step's CHANGED_FILES_PATH.
	ChangedFilesEnv string  `json:"changed_files_env,omitempty"`
	Diff            *[]byte `json:"diff,omitempty"`
}

// Answer is what one case printed and wrote.
type Answer struct {
	// Exit is the exit status (an uncaught exception is 1, as for the CLI).
	Exit int `json:"exit"`
	// Stdout and Stderr are what the case printed.
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	// GitHubOutput is what the case appended to $GITHUB_OUTPUT.
	GitHubOutput string `json:"github_output"`
	// Registrations are the checkout's registrations (a Registry case).
	Registrations []PyRegistration `json:"registrations"`
}

// PyRegistration is one CIRegistry of the checkout's collect_tests. Hardware
// is a GPU-generation checkout's hardware=[...] (rules §11); older rows have none.
type PyRegistration struct {
	Backend  string   `json:"backend"`
	File     string   `json:"filename"`
	EstTime  float64  `json:"est_time"`
	Suite    string   `json:"suite"`
	Labels   []string `json:"labels"`
	Hardware []string `json:"hardware,omitempty"`
	Nightly  bool     `json:"nightly"`
	Disabled *string  `json:"disabled"`
	Implicit bool     `json:"implicit"`
}

// LastLine is the last non-empty line of the case's stderr (a traceback's
// exception, an ::error:: annotation), or "".
func (a Answer) LastLine() string {
	lines := strings.Split(strings.TrimRight(a.Stderr, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if s := strings.TrimSpace(lines[i]); s != "" {
			return s
		}
	}
	return ""
}

// Outputs are the key=value lines the case appended to $GITHUB_OUTPUT, in
// order.
func (a Answer) Outputs() []KV {
	var out []KV
	for _, line := range strings.Split(a.GitHubOutput, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			out = append(out, KV{Key: k, Value: v})
		}
	}
	return out
}

// KV is one step output.
type KV struct {
	Key, Value string
}

// NoPythonError is a checkout planner with no usable Python.
type NoPythonError struct {
	// Python is the interpreter asked for ("" = python3 on PATH).
	Python string
	// Problem says what is wrong with it.
	Problem string
}

func (e *NoPythonError) Error() string {
	which := "python3 on PATH"
	if e.Python != "" {
		which = e.Python
	}
	return fmt.Sprintf("--planner checkout runs the checkout's own tests/ci code with Python %s or newer, but %s %s; install Python %s+ (Miles CI runs 3.11), or name one with --python PATH",
		MinPython, which, e.Problem, MinPython)
}

// NewCheckout checks the checkout folder and finds the interpreter: python
// ("" = python3 on PATH). Its version is checked when it first runs.
func NewCheckout(repo, python string) (*Checkout, error) {
	root, err := policy.CheckCheckout(repo)
	if err != nil {
		return nil, err
	}
	if root, err = filepath.Abs(root); err != nil {
		return nil, err
	}
	exe := python
	if exe == "" {
		exe = "python3"
	}
	path, err := exec.LookPath(exe)
	if err != nil {
		return nil, &NoPythonError{Python: python, Problem: "is not found"}
	}
	return &Checkout{Root: root, Python: LocalPython{Exe: path, Root: root}}, nil
}

// OpenCheckout is NewCheckout with the interpreter given, e.g. the Dagger
// module's container: repo is the checkout as miles-ci reads it.
func OpenCheckout(repo string, python Interpreter) (*Checkout, error) {
	root, err := policy.CheckCheckout(repo)
	if err != nil {
		return nil, err
	}
	if root, err = filepath.Abs(root); err != nil {
		return nil, err
	}
	return &Checkout{Root: root, Python: python}, nil
}

// Open is OpenCheckout when interp is given, else NewCheckout with python.
func Open(repo, python string, interp Interpreter) (*Checkout, error) {
	if interp != nil {
		return OpenCheckout(repo, interp)
	}
	return NewCheckout(repo, python)
}

// Bounds of what the checkout's code may print back.
const (
	maxDriverOutput = 64 << 20
	maxDriverStderr = 1 << 20
)

// limitedBuffer keeps at most max bytes and remembers that it overflowed.
type limitedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); len(p) > room {
		b.over = true
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

// Ask runs the cases in one interpreter, in order, and returns one answer per case.
func (c *Checkout) Ask(ctx context.Context, cases []Case) ([]Answer, error) {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 2*time.Minute + time.Duration(len(cases))*200*time.Millisecond
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stdout, stderr, runErr := c.Python.Run(ctx, driverSource, func(root, scratch string) ([]byte, error) {
		return json.Marshal(map[string]any{"root": root, "tmp": scratch, "cases": cases})
	})
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("the checkout's tests/ci code did not answer %d case(s) within %s; is its run_suite.py waiting on something?", len(cases), timeout)
	}
	var np *NoPythonError
	if errors.As(runErr, &np) {
		return nil, runErr
	}
	var answers []Answer
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 0, 1<<20), maxDriverOutput)
	for sc.Scan() {
		line := sc.Bytes()
		if len(answers) == 0 && bytes.Contains(line, []byte(`"python_too_old"`)) {
			var old struct {
				Version string `json:"python_too_old"`
			}
			if json.Unmarshal(line, &old) == nil && old.Version != "" {
				return nil, &NoPythonError{Python: c.Python.String(), Problem: "is Python " + old.Version}
			}
		}
		var a Answer
		if err := json.Unmarshal(line, &a); err != nil {
			return nil, fmt.Errorf("the checkout planner's driver printed a line that is not an answer (%v): %.200q", err, line)
		}
		answers = append(answers, a)
	}
	if len(answers) != len(cases) {
		why := strings.TrimSpace(string(stderr))
		if len(why) > 2000 {
			why = why[len(why)-2000:]
		}
		return nil, fmt.Errorf("the checkout's tests/ci code answered %d of %d case(s) and stopped (%v): %s", len(answers), len(cases), runErr, why)
	}
	return answers, nil
}

// LocalPython is a local interpreter (python3 >= 3.10) run as a child
// process in the checkout folder.
type LocalPython struct {
	// Exe is the interpreter's path.
	Exe string
	// Root is the checkout folder.
	Root string
}

func (p LocalPython) String() string { return p.Exe }

// Run implements Interpreter with a child process: the driver in a fresh
// temporary folder, the request on stdin, a minimal environment, bounded
// output, killed when ctx ends.
func (p LocalPython) Run(ctx context.Context, driver string, request func(root, scratch string) ([]byte, error)) ([]byte, []byte, error) {
	tmp, err := os.MkdirTemp("", "miles-ci-checkout-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	path := filepath.Join(tmp, "miles_ci_driver.py")
	if err := os.WriteFile(path, []byte(driver), 0o600); err != nil {
		return nil, nil, err
	}
	work := filepath.Join(tmp, "work")
	if err := os.Mkdir(work, 0o700); err != nil {
		return nil, nil, err
	}
	in, err := request(p.Root, work)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.CommandContext(ctx, p.Exe, "-S", "-B", path)
	cmd.Dir = p.Root
	cmd.Env = DriverEnv(p.Root, work)
	cmd.Env = append(cmd.Env, "PATH="+os.Getenv("PATH"))
	cmd.Stdin = bytes.NewReader(in)
	stdout := &limitedBuffer{max: maxDriverOutput}
	stderr := &limitedBuffer{max: maxDriverStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 5 * time.Second
	runErr := cmd.Run()
	if stdout.over {
		return nil, nil, fmt.Errorf("the checkout's tests/ci code printed more than %d MiB; refusing to read it", maxDriverOutput>>20)
	}
	var ee *exec.ExitError
	if runErr != nil && !errors.As(runErr, &ee) && ctx.Err() == nil {
		return nil, nil, &NoPythonError{Python: p.Exe, Problem: "cannot be started (" + runErr.Error() + ")"}
	}
	return stdout.Bytes(), stderr.Bytes(), runErr
}

// DriverEnv is the whole environment the checkout's code runs with (besides
// PATH): nothing of the caller's, so no token or secret reaches it.
func DriverEnv(root, scratch string) []string {
	return []string{
		"HOME=" + scratch,
		"LANG=C.UTF-8",
		"PYTHONHASHSEED=0",
		"PYTHONDONTWRITEBYTECODE=1",
		"PYTHONIOENCODING=utf-8",
		"PYTHONPATH=" + root,
	}
}
