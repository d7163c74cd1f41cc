package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/radixark/miles-ci/cmd/miles-ci/engine"
	"github.com/radixark/miles-ci/history"
	"github.com/radixark/miles-ci/report"
	"github.com/radixark/miles-ci/stagerun"
)

// orderProbe replaces writeResultFile: at the results folder's first file
// it keeps what stdout holds then, how many rows the history holds and what
// the results folder holds (a command that wrote into it before finish, with
// any writer, changed it by then); full makes every write fail as a full
// disk does.
type orderProbe struct {
	out          *bytes.Buffer
	db, results  string
	full         bool
	atFirst      *string
	rowsAtFirst  int
	stateAtFirst string
	writes       int
}

func (p *orderProbe) install(t *testing.T) {
	t.Helper()
	old := writeResultFile
	t.Cleanup(func() { writeResultFile = old })
	writeResultFile = func(path string, data []byte, perm fs.FileMode) error {
		if p.writes++; p.atFirst == nil {
			s := p.out.String()
			p.atFirst = &s
			p.rowsAtFirst = historyRows(t, p.db)
			p.stateAtFirst = treeState(t, p.results)
		}
		if p.full {
			return &fs.PathError{Op: "write", Path: path, Err: syscall.ENOSPC}
		}
		return old(path, data, perm)
	}
}

// treeState is what a folder holds, each entry's path, mode, size and
// modification time ("" when there is no folder).
func treeState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d %d\n", path, info.Mode(), info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func historyRows(t *testing.T, db string) int {
	t.Helper()
	s, err := history.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.Rows(context.Background(), time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return len(rows)
}

// fakeRunEngine makes run and file-run's engine pass every file, with an
// est_time (so the attempt records).
func fakeRunEngine(t *testing.T) {
	t.Helper()
	old := engineRun
	t.Cleanup(func() { engineRun = old })
	engineRun = func(_ context.Context, req stagerun.Request, _ engine.Inputs, _ string, _ io.Writer, _ *report.Masker, _ func(string)) (stagerun.Result, error) {
		exit := 0
		s := report.Summary{HW: req.Stage.Backend, Suite: req.Stage.Name, Passed: true, Verdict: report.Passed, Tests: []report.TestResult{
			{File: "tests/fast/test_data_source.py", Status: report.Pass, Attempts: 1, ElapsedS: 4, ExitCode: &exit, EstTime: 30}}}
		return stagerun.Result{Summary: s, Files: []stagerun.ResultFile{{Name: "run.log", Data: "ran\n"}}}, nil
	}
}

// TestVerdictBeforeFolder: every command that ends with a results folder
// prints its verdict and records the history before it writes the folder,
// and a folder that cannot be written (a full disk) leaves the verdict, the
// history and the exit status as they are (issue 38: one order; item 3:
// triage --out on a full disk exited 125 with nothing on stdout).
func TestVerdictBeforeFolder(t *testing.T) {
	repo := gitCheckout(t)
	for _, tc := range []struct {
		name string
		// setup fakes the engine; args are the command's, given the
		// results folder and the history; exit is the verdict's.
		setup func(t *testing.T, results string)
		args  func(results string) []string
		exit  int
	}{
		{"run", func(t *testing.T, _ string) { fakeRunEngine(t) },
			func(r string) []string {
				return []string{"run", "--repo", repo, "--stage", "stage-b-cpu", "--gpus", "none", "--quiet", "--results", r}
			}, 0},
		{"file-run", func(t *testing.T, _ string) { fakeRunEngine(t) },
			func(r string) []string {
				return []string{"file-run", "--repo", repo, "--file", "tests/fast/test_data_source.py", "--gpus", "none", "--quiet", "--results", r}
			}, 0},
		{"ci", func(t *testing.T, _ string) { fakeCIEngine(t, map[string]bool{"stage-a-cpu/1": true}); withEstTime(t) },
			func(r string) []string {
				return []string{"ci", "--repo", repo, "--event", "pull_request", "--gpus", "none", "--quiet", "--only", "cpu", "--results", r}
			}, 1},
		{"ci --rerun-failed", func(t *testing.T, results string) {
			fakeCIEngine(t, map[string]bool{"stage-a-cpu/1": true})
			withEstTime(t)
			if code, _, stderr := runCLI(t, nil, "ci", "--repo", repo, "--event", "pull_request", "--gpus", "none", "--quiet", "--only", "cpu", "--results", results); code != 1 {
				t.Fatalf("attempt 1: %d\n%s", code, stderr)
			}
			fakeCIEngine(t, nil)
			withEstTime(t)
		}, func(r string) []string {
			return []string{"ci", "--repo", repo, "--event", "pull_request", "--gpus", "none", "--quiet", "--only", "cpu", "--rerun-failed", r}
		}, 0},
		{"triage", func(t *testing.T, _ string) { fakeTriageEngine(t) },
			func(r string) []string {
				return []string{"triage", "--repo", repo, "--base", "main", "--gpus", "none", "--quiet", "--out", r, "--file", "tests/fast/test_data_source.py"}
			}, 1},
	} {
		for _, full := range []bool{false, true} {
			name := tc.name
			if full {
				name += " on a full disk"
			}
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				results, db := filepath.Join(dir, "results"), filepath.Join(dir, "h.db")
				tc.setup(t, results)
				var out, errb bytes.Buffer
				p := &orderProbe{out: &out, db: db, results: results, full: full}
				p.install(t)
				before := treeState(t, results)
				args := append(tc.args(results), "--record", "--db", db)
				code := Run(args, Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
				if code != tc.exit {
					t.Fatalf("wanted the verdict's exit %d, got %d\n%s\n%s", tc.exit, code, out.String(), errb.String())
				}
				if p.atFirst == nil || *p.atFirst == "" || !strings.HasPrefix(out.String(), *p.atFirst) {
					t.Fatalf("wanted the verdict printed before the folder's first file, got %q before it\n%s", deref(p.atFirst), out.String())
				}
				if p.atFirst != nil && p.stateAtFirst != before {
					t.Errorf("wanted the results folder untouched until finish writes it after the verdict, it changed before:\n%s\nwas\n%s", p.stateAtFirst, before)
				}
				if now := treeState(t, results); full && now != before {
					t.Errorf("wanted a folder that cannot be written left as it was, it holds\n%s\nwas\n%s", now, before)
				}
				if p.rowsAtFirst == 0 {
					t.Errorf("wanted the history recorded before the folder, it held no row then\n%s", errb.String())
				}
				after := strings.TrimPrefix(out.String(), *p.atFirst)
				for _, l := range strings.Split(strings.TrimSuffix(after, "\n"), "\n") {
					if l != "" && !strings.HasPrefix(l, "results: ") && !strings.HasPrefix(l, "failed: ") && !strings.HasPrefix(l, "    ") {
						t.Errorf("wanted only what names the folder after it, got %q", l)
					}
				}
				if full {
					for _, want := range []string{"no space left on device", results + " is left as it was and this run's results are not kept",
						"the verdict above stands (exit", "the runtime history is recorded without it"} {
						if !strings.Contains(errb.String(), want) {
							t.Errorf("wanted %q on stderr, got\n%s", want, errb.String())
						}
					}
					if strings.Contains(after, "results: ") {
						t.Errorf("wanted no results: line for a folder not written, got %q", after)
					}
				}
			})
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "(nothing: no folder written)"
	}
	return *s
}

// TestOneOrder holds the commands to the one order: only finish writes a
// results folder, and run, file-run, ci and triage end with it.
func TestOneOrder(t *testing.T) {
	fset := gotoken.NewFileSet()
	names, _ := filepath.Glob("*.go")
	ends := map[string]bool{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		var fn string
		ast.Inspect(f, func(n ast.Node) bool {
			if d, ok := n.(*ast.FuncDecl); ok {
				fn = d.Name.Name
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			id, ok := call.Fun.(*ast.Ident)
			switch {
			case !ok:
			case id.Name == "writeResultsDepth" && fn != "finish":
				t.Errorf("%s: %s writes a results folder itself; end the command with finish, which writes it after the verdict", fset.Position(call.Pos()), fn)
			case id.Name == "finish":
				ends[fn] = true
			}
			return true
		})
	}
	for _, fn := range []string{"execute", "printRun", "runTriage", "printWhatIf"} {
		if !ends[fn] {
			t.Errorf("%s does not end with finish", fn)
		}
	}
	if _, err := os.Stat("results.go"); err != nil {
		t.Fatal(err)
	}
}
