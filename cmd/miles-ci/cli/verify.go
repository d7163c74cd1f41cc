package cli

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/usecase"
)

func init() {
	register("verify", "compare miles-ci's plan, policy and file-plan with the checkout's own tests/ci code (exit 1 on any difference)", runVerify)
}

// verifyTimeout bounds a whole verify run.
const verifyTimeout = 30 * time.Minute

func runVerify(args []string, env Env) int {
	fs := newFlagSet("verify", "[--repo DIR] [--python PATH] [--changed-files FILE ...] [--git-diffs N] [--max-cases N] [--json]", env)
	repo := fs.String("repo", "DIR", "the Miles checkout (default: the current folder)")
	python := fs.String("python", "PATH", "the Python (>= "+usecase.MinPython+") to run the checkout's code with (default python3 on PATH)", fromEnv("MILES_CI_PYTHON"))
	diffs := fs.List("changed-files", "FILE", "more git diff --name-status -z -M outputs to resolve the pull-request policy with")
	gitDiffs := fs.Int("git-diffs", "N", "also use the diffs of the checkout's last N commits, when it is a git work tree (default 10)", 0, 200)
	maxCases := fs.Int("max-cases", "N", fmt.Sprintf("at most N cases per command (default %d)", usecase.DefaultMaxCases), 1, 100000)
	asJSON := fs.Bool("json", "print the report as JSON")
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	req := usecase.VerifyRequest{Repo: *repo, Python: *python}
	if maxCases.Set {
		req.MaxCases = maxCases.Value
	}
	for _, f := range *diffs {
		d, err := fsinput.ReadFile(f, fsinput.ChangedFiles)
		if err != nil {
			return fail(env, fmt.Errorf("--changed-files %w", err))
		}
		if d == nil {
			d = []byte{}
		}
		req.Diffs = append(req.Diffs, usecase.NamedDiff{Name: filepath.Base(f), Diff: d})
	}
	n := 10
	if gitDiffs.Set {
		n = gitDiffs.Value
	}
	req.Diffs = append(req.Diffs, recentDiffs(*repo, n)...)
	ctx, cancel := context.WithTimeout(context.Background(), verifyTimeout)
	defer cancel()
	req.Progress = func(command string, done, total int) {
		fmt.Fprintf(env.Stderr, "miles-ci verify: %s: %d/%d cases answered by the checkout\n", command, done, total)
	}
	rep, err := usecase.Verify(ctx, req)
	if err != nil {
		return fail(env, err)
	}
	if *asJSON {
		if code := printJSON(env, rep); code != 0 {
			return code
		}
	} else {
		io.WriteString(env.Stdout, rep.Text())
	}
	if !rep.OK() {
		return 1
	}
	return 0
}

// recentDiffs are the changed-files diffs of the checkout's last n commits,
// as the resolve-ci-policy job computes them (git diff --name-status -z -M
// C^1 C); none when the checkout is not a git work tree.
func recentDiffs(repo string, n int) []usecase.NamedDiff {
	if n == 0 {
		return nil
	}
	if repo == "" {
		repo = "."
	}
	git := func(args ...string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", repo, "-c", "core.fsmonitor=false"}, args...)...)
		return cmd.Output()
	}
	out, err := git("log", "-n", strconv.Itoa(n), "--format=%H %P")
	if err != nil {
		return nil
	}
	var diffs []usecase.NamedDiff
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue // the root commit has no HEAD^1
		}
		d, err := git("diff", "--no-ext-diff", "--no-textconv", "--name-status", "-z", "-M", f[1], f[0])
		if err != nil || len(d) > 16<<20 {
			continue
		}
		diffs = append(diffs, usecase.NamedDiff{Name: "commit " + f[0][:12], Diff: d})
	}
	return diffs
}
