package stagerun_test

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/radixark/miles-ci/report"
	. "github.com/radixark/miles-ci/stagerun"
)

func needBash(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"bash", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: %v", tool, err)
		}
	}
}

// TestScriptsParse checks every fixed script is valid bash.
func TestScriptsParse(t *testing.T) {
	needBash(t)
	for _, name := range ScriptNames {
		if Script(name) == "" {
			t.Fatalf("script %s is empty", name)
		}
		out, err := exec.Command("bash", "-n", "-c", Script(name)).CombinedOutput()
		if err != nil {
			t.Errorf("script %s: %v: %s", name, err, out)
		}
	}
}

// TestScriptFiles checks that what shellcheck reads in scripts/ is what runs:
// each fixed script is its file (gpu-wait after rocm-devices.sh), the run
// wrapper is run-wrapper.py, and the folder holds no other script.
func TestScriptFiles(t *testing.T) {
	want := map[string]string{"rocm-devices.sh": "", "run-wrapper.py": RunWrapper(), ".shellcheckrc": ""}
	for _, name := range ScriptNames {
		want[name+".sh"] = Script(name)
	}
	want["gpu-wait.sh"] = strings.TrimPrefix(Script("gpu-wait"), read(t, "scripts/rocm-devices.sh"))
	entries, err := os.ReadDir("scripts")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
		text, ok := want[e.Name()]
		if !ok {
			t.Errorf("scripts/%s is not a fixed script; embed it in scripts.go or remove it", e.Name())
		} else if text != "" && read(t, filepath.Join("scripts", e.Name())) != text {
			t.Errorf("scripts/%s: wanted the text that runs, %q, got %q", e.Name(), text, read(t, filepath.Join("scripts", e.Name())))
		}
	}
	if len(got) != len(want) {
		t.Errorf("wanted the files %v in scripts/, got %v", slices.Sorted(maps.Keys(want)), got)
	}
}

// runScript runs a fixed script on the host with its results in a temp dir.
func runScript(t *testing.T, env []string, name string, args ...string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("bash", append([]string{"-c", Script(name), name}, args...)...)
	cmd.Env = append(append(os.Environ(), "MILES_CI_RESULTS="+dir), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("script %s: %v: %s", name, err, out)
	}
	return string(out), dir
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// wrap runs the run wrapper on the host (without --reap: it stops leftover
// processes only inside a Dagger exec) and returns its stdout, its record and
// its exit status.
func wrap(t *testing.T, args ...string) (string, report.RunRecord, int) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	cmd := exec.Command("python3", append([]string{"-ISc", RunWrapper(), "miles-ci-run"}, args...)...)
	cmd.Env = append(os.Environ(), "MILES_CI_RESULTS="+t.TempDir())
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	rec, err := report.ParseRecord(stderr.String())
	if err != nil {
		t.Fatalf("%v (stderr %q)", err, stderr.String())
	}
	if err := rec.CheckEngine(code); err != nil {
		t.Error(err)
	}
	return stdout.String(), rec, code
}

// TestRunWrapper checks the run wrapper: limits, the record of each way a
// runner ends, status lines kept apart from a flood, and the log cap.
func TestRunWrapper(t *testing.T) {
	cmd := `printf 'unfinished [3/4] x '; echo "[1/2] tests/e2e/test_a.py  PASS  elapsed=3s"; echo "[12/5000] loss=0.1"; ` +
		`echo "[2/2] tests/e2e/test_b.py  FAIL  elapsed=1s exit=1" >&2; echo "limit=$(ulimit -n)"; read x && echo "stdin: $x"; exit 7`
	out, rec, code := wrap(t, "--ulimit", "-n", "256", "--ulimit", "-c", "not-a-number", "--", "sh", "-c", cmd)
	if !strings.Contains(out, "limit=256") || strings.Contains(out, "stdin:") {
		t.Errorf("wanted the ulimit lowered to 256 and no stdin, got %q", out)
	}
	if !strings.HasPrefix(out, "::warning::could not raise ulimit -c to not-a-number (needs CAP_SYS_RESOURCE); the engine's limit ") {
		t.Errorf("wanted a refused limit reported at the top of the log, got %q", out)
	}
	want := []string{"[1/2] tests/e2e/test_a.py  PASS  elapsed=3s", "[2/2] tests/e2e/test_b.py  FAIL  elapsed=1s exit=1"}
	if rec.Ending != report.Exited || rec.ExitCode != 7 || code != 7 || !slices.Equal(rec.StatusLines, want) {
		t.Errorf("wanted exit 7 and the status lines %q, got %+v (exit %d)", want, rec, code)
	}

	_, rec, code = wrap(t, "--", "sh", "-c", "kill -9 $$")
	if rec.Ending != report.Signaled || rec.Signal != 9 || code != 192 {
		t.Errorf("wanted killed by signal 9 (exit 192), got %+v (exit %d)", rec, code)
	}
	_, rec, _ = wrap(t, "--", "sh", "-c", "exit 124")
	if rec.Ending != report.Exited || rec.ExitCode != 124 {
		t.Errorf("wanted exit 124 as an exit status, got %+v", rec)
	}
	_, rec, code = wrap(t, "--timeout", "1", "--kill-after", "1", "--", "sh", "-c", `trap "" TERM; sleep 20`)
	if rec.Ending != report.TimedOut || rec.TimeoutS != 1 || code != 192 || rec.ElapsedS > 10 {
		t.Errorf("wanted miles-ci's timer to end the run after 1 s (TERM ignored, then KILL), got %+v (exit %d)", rec, code)
	}
	_, rec, _ = wrap(t, "--", "no-such-command-here")
	if rec.Ending != report.Exited || rec.ExitCode != 127 {
		t.Errorf("wanted a command that cannot start to exit 127, got %+v", rec)
	}

	flood := `i=0; while [ $i -lt 3000 ]; do echo "[12/5000] loss=0.1 step $i"; i=$((i+1)); done; echo "[1/1] tests/e2e/a.py  PASS  elapsed=0s"`
	out, rec, _ = wrap(t, "--log-cap", "2000", "--", "sh", "-c", flood)
	if len(out) > 2300 || !strings.Contains(out, "bytes of output cut here") || rec.LogCutBytes == 0 ||
		!slices.Equal(rec.StatusLines, []string{"[1/1] tests/e2e/a.py  PASS  elapsed=0s"}) {
		t.Errorf("wanted a cut log (%d bytes) and the status line kept, got %+v", len(out), rec)
	}
	// A child holding the output pipe after the runner exits is not waited for.
	start := time.Now()
	_, rec, _ = wrap(t, "--", "sh", "-c", "sleep 30 & echo done")
	if time.Since(start) > 10*time.Second || rec.ExitCode != 0 {
		t.Errorf("wanted the run to end with the runner, took %s: %+v", time.Since(start), rec)
	}
}

// TestRunWrapperReaps runs the wrapper as a Dagger exec runs it (PID 1 is
// /.init, in a PID namespace of its own) and checks it stops what the runner
// left behind. Needs root for unshare.
func TestRunWrapperReaps(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a PID namespace")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare")
	}
	script := `exec -a /.init bash -c 'python3 -c "$0" miles-ci-run --reap -- sh -c "sleep 60 & (setsid sleep 60 &); exit 3"; echo "rc=$?"' "$1"`
	start := time.Now()
	out, err := exec.Command("unshare", "--pid", "--fork", "--mount-proc", "bash", "-c", script, "x", RunWrapper()).CombinedOutput()
	if err != nil {
		t.Skipf("unshare refused: %v %s", err, out)
	}
	i := strings.Index(string(out), report.RecordPrefix)
	if i < 0 {
		t.Fatalf("no record in %q", out)
	}
	rest := string(out[i:])
	rec, err := report.ParseRecord(rest[:strings.IndexByte(rest, '\n')+1])
	if err != nil || rec.ExitCode != 3 || rec.Leftovers != 2 || time.Since(start) > 20*time.Second || !strings.Contains(string(out), "rc=3") {
		t.Errorf("wanted exit 3 and 2 leftovers stopped, got %+v, %v after %s: %s", rec, err, time.Since(start), out)
	}
}

// TestPlanScript checks the plan wrapper keeps a copy and fails as the plan does.
func TestPlanScript(t *testing.T) {
	needBash(t)
	_, dir := runScript(t, nil, "plan", "echo", "Enabled 0 test(s)")
	if got := read(t, filepath.Join(dir, "plan.txt")); got != "Enabled 0 test(s)\n" {
		t.Errorf("wanted the plan copied, got %q", got)
	}
	cmd := exec.Command("bash", "-c", Script("plan"), "plan", "sh", "-c", "echo partial; exit 3")
	cmd.Env = append(os.Environ(), "MILES_CI_RESULTS="+t.TempDir())
	if err := cmd.Run(); err == nil {
		t.Errorf("wanted the plan wrapper to fail when the plan fails")
	}
}

// TestGPUWaitScript checks the GPU wait with an nvidia-smi that answers.
func TestGPUWaitScript(t *testing.T) {
	needBash(t)
	bin := t.TempDir()
	smi := "#!/bin/sh\ncase \"$1\" in -L) echo 'GPU 0: fake';; *) echo '0, fake, 0 MiB';; esac\n"
	if err := os.WriteFile(filepath.Join(bin, "nvidia-smi"), []byte(smi), 0o755); err != nil {
		t.Fatal(err)
	}
	out, _ := runScript(t, []string{"PATH=" + bin + ":" + os.Getenv("PATH")}, "gpu-wait", "nvidia")
	if out != "0, fake, 0 MiB\n" {
		t.Errorf("wanted the GPU query printed, got %q", out)
	}
}

// TestReconcileScript checks the CUDA requirements step puts back a cudnn
// version the install changed, and leaves an absent one alone.
func TestReconcileScript(t *testing.T) {
	needBash(t)
	bin, state := t.TempDir(), t.TempDir()
	// A fake python whose pip knows nvidia-cudnn-cu12 (9.1 before, 9.5 after
	// `pip install -r`) and logs every install.
	fake := `#!/bin/bash
s=` + state + `
case "$3" in
show) [ "$4" = nvidia-cudnn-cu12 ] || exit 1; echo "Version: $(cat $s/cu12 2>/dev/null || echo 9.1)"; exit 0 ;;
install) echo "install ${*:4}" >>$s/log; [ "$4" = -r ] && echo 9.5 >$s/cu12; exit 0 ;;
esac
exit 1
`
	if err := os.WriteFile(filepath.Join(bin, "python"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	runScript(t, []string{"PATH=" + bin + ":" + os.Getenv("PATH")}, "reconcile", "/ws/requirements.txt")
	want := "install -r /ws/requirements.txt --break-system-packages\ninstall --no-deps --break-system-packages nvidia-cudnn-cu12==9.1\n"
	if got := read(t, filepath.Join(state, "log")); got != want {
		t.Errorf("wanted installs %q, got %q", want, got)
	}
}

// TestPlanScriptIsBounded checks the plan step passes on at most one byte
// more than miles-ci reads of a plan, however much the runner prints, and
// keeps the runner's own failure (issue 22, case 9).
func TestPlanScriptIsBounded(t *testing.T) {
	out, dir := runScript(t, nil, "plan", "python3", "-c", "import sys\nfor _ in range(300): sys.stdout.write('x' * 1048576)")
	// (out has the runner's BrokenPipeError after the bytes head passed on.)
	if !strings.HasPrefix(out, strings.Repeat("x", 1<<20+1)) || len(read(t, filepath.Join(dir, "plan.txt"))) != 1<<20+1 {
		t.Errorf("wanted 1048577 bytes passed on and kept, got %d", len(read(t, filepath.Join(dir, "plan.txt"))))
	}
	cmd := exec.Command("bash", "-c", Script("plan"), "plan", "sh", "-c", "echo 'No tests found for x'; exit 3")
	cmd.Env = append(os.Environ(), "MILES_CI_RESULTS="+t.TempDir())
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("wanted the runner's exit 3, got %v", err)
	}
}

// TestRunWrapperIsIsolated checks the checkout's sitecustomize and
// usercustomize (the workspace is on PYTHONPATH, and is the working folder)
// never run in the wrapper's own process, while the runner it starts still
// sees them (issue 22, case 2).
func TestRunWrapperIsIsolated(t *testing.T) {
	ws := t.TempDir()
	hook := "import os\nopen(os.path.join(%q, 'ran-' + str(os.getpid())), 'w').write('x')\n"
	for _, name := range []string{"sitecustomize.py", "usercustomize.py"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(fmt.Sprintf(hook, ws)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("python3", "-ISc", RunWrapper(), "miles-ci-run", "--", "python3", "-c", "import os; print('runner', os.getpid())")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "MILES_CI_RESULTS="+t.TempDir(), "PYTHONPATH="+ws)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	wrapperPID := cmd.Process.Pid
	if _, err := os.Stat(filepath.Join(ws, fmt.Sprintf("ran-%d", wrapperPID))); err == nil {
		t.Errorf("the checkout's sitecustomize ran in the wrapper's process (%d)", wrapperPID)
	}
	if !strings.Contains(string(out), "runner ") {
		t.Errorf("wanted the runner's output, got %q", out)
	}
}

// TestRunWrapperStatusLinesByPosition checks that with the plan the wrapper
// keeps only the lines at a planned file's position, so 5,000 status-shaped
// lines of test output cannot push the runner's own out (issue 22, case 4),
// and that a test printing a planned file's line over and over is named.
func TestRunWrapperStatusLinesByPosition(t *testing.T) {
	t.Setenv(PlanEnv, `["tests/e2e/gpu/test_a.py", "tests/e2e/gpu/test_b.py"]`)
	flood := `for i in $(seq 1 5000); do echo "[$i/5000] case_$i  PASS  elapsed=0s"; done; ` +
		`echo "[1/2] tests/e2e/gpu/test_a.py  PASS  elapsed=1s"; echo "[2/2] tests/e2e/gpu/test_b.py  PASS  elapsed=1s"; ` +
		`test -z "$` + PlanEnv + `" || echo "the plan reached the runner"`
	out, rec, _ := wrap(t, "--", "sh", "-c", flood)
	want := []string{"[1/2] tests/e2e/gpu/test_a.py  PASS  elapsed=1s", "[2/2] tests/e2e/gpu/test_b.py  PASS  elapsed=1s"}
	if !slices.Equal(rec.StatusLines, want) || rec.StatusForeign != 5000 || rec.StatusDropped != 0 || len(rec.StatusOverflow) != 0 {
		t.Errorf("wanted only the runner's two lines and 5000 foreign, got %q, foreign %d, dropped %d, overflow %q", rec.StatusLines, rec.StatusForeign, rec.StatusDropped, rec.StatusOverflow)
	}
	if strings.Contains(out, "the plan reached the runner") {
		t.Error("wanted the plan variable kept from the runner's environment")
	}
	forge := `for i in $(seq 1 30); do echo "[1/2] tests/e2e/gpu/test_a.py  PASS  elapsed=0s"; done; ` +
		`echo "[1/2] tests/e2e/gpu/test_a.py  FAIL  elapsed=1s exit=1"; exit 255`
	_, rec, _ = wrap(t, "--", "sh", "-c", forge)
	if len(rec.StatusLines) != 16 || rec.StatusLines[15] != "[1/2] tests/e2e/gpu/test_a.py  FAIL  elapsed=1s exit=1" || !slices.Equal(rec.StatusOverflow, []string{"tests/e2e/gpu/test_a.py"}) {
		t.Errorf("wanted the first and last 8 kept (the runner's FAIL last) and test_a.py named, got %d %q", len(rec.StatusLines), rec.StatusOverflow)
	}
}

// TestRunWrapperPytestChannel runs pytest under the wrapper with miles-ci's
// plugin: a test whose atexit hook forges an all-pass junit.xml and calls
// os._exit(0) cannot take back what pytest reported (issue 22, case 5).
// Needs a python3 with pytest (MILES_CI_PYTEST_PYTHON, else /usr/bin/python3).
func TestRunWrapperPytestChannel(t *testing.T) {
	py := os.Getenv("MILES_CI_PYTEST_PYTHON")
	if py == "" {
		py = "/usr/bin/python3"
	}
	if err := exec.Command(py, "-c", "import pytest").Run(); err != nil {
		t.Skipf("no pytest in %s", py)
	}
	ws, results := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(ws, "tests", "fast"), 0o755)
	forge := fmt.Sprintf("import atexit, os\ndef _forge():\n    open(%q, 'w').write('<testsuites/>')\n    os._exit(0)\natexit.register(_forge)\ndef test_x():\n    assert False\n", filepath.Join(results, "junit.xml"))
	os.WriteFile(filepath.Join(ws, "tests", "fast", "test_a.py"), []byte(forge), 0o644)
	os.WriteFile(filepath.Join(ws, "tests", "fast", "test_b.py"), []byte("def test_ok():\n    pass\n"), 0o644)
	cmd := exec.Command(py, "-ISc", RunWrapper(), "miles-ci-run", "--", py, "-m", "pytest", "tests/fast/test_a.py", "tests/fast/test_b.py", "-v", "-p", "no:cacheprovider")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "MILES_CI_RESULTS="+results, PytestEnv+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("wanted the forged exit 0, got %v", err)
	}
	rec, err := report.ParseRecord(stderr.String())
	if err != nil {
		t.Fatal(err)
	}
	pr := rec.Pytest
	if rec.ExitCode != 0 || pr == nil || pr.Sessions != 1 || !slices.Equal(pr.ExitStatuses, []int{1}) ||
		!pr.Files["tests/fast/test_a.py"].Failed || pr.Files["tests/fast/test_b.py"].Failed || !pr.Files["tests/fast/test_b.py"].Ran {
		t.Errorf("wanted exit 0 and pytest's own report (1 session, exit status 1, test_a failed, test_b passed), got %d %+v", rec.ExitCode, pr)
	}
}

// TestRunWrapperRecordAfterPartialLine checks a test that leaves an
// unfinished line on the wrapper's own stderr does not void its record.
func TestRunWrapperRecordAfterPartialLine(t *testing.T) {
	_, rec, code := wrap(t, "--", "sh", "-c", `printf 'unfinished' >/proc/$PPID/fd/2; exit 3`)
	if rec.ExitCode != 3 || code != 3 {
		t.Errorf("wanted the record of exit 3, got %+v (%d)", rec, code)
	}
}

// TestCPUToolsChecksHelm checks the CPU tools step installs helm only from
// an archive of the sha256 it pins: it names HelmVersion's on both
// architectures, refuses a download of other bytes, and a version it has no
// sum for.
func TestCPUToolsChecksHelm(t *testing.T) {
	needBash(t)
	for _, arch := range []string{"amd64", "arm64"} {
		if !regexp.MustCompile(`(?m)^\t` + regexp.QuoteMeta(HelmVersion) + `-` + arch + `\) sum=[0-9a-f]{64} ;;$`).MatchString(Script("cpu-tools")) {
			t.Errorf("cpu-tools.sh has no sha256 for helm %s on linux-%s", HelmVersion, arch)
		}
	}
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skip("the download runs on linux amd64 or arm64")
	}
	bin := t.TempDir()
	for name, body := range map[string]string{
		"uv":   "#!/bin/sh\necho uv 0.0.0\n",
		"curl": "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && { echo 'not helm' >\"$2\"; exit 0; }; shift; done\nexit 1\n",
	} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := bin + ":/usr/bin:/bin"
	if _, err := exec.Command("bash", "-c", "PATH="+path+" command -v helm").Output(); err == nil {
		t.Skip("a helm on /usr/bin or /bin: the step would not download one")
	}
	for version, want := range map[string]string{
		HelmVersion: "does not have the sha256",
		"v0.0.1":    "no checksum for helm v0.0.1",
	} {
		cmd := exec.Command("bash", "-c", Script("cpu-tools"), "cpu-tools", version)
		cmd.Env = append(os.Environ(), "PATH="+path)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), want) {
			t.Errorf("helm %s: wanted a failure saying %q, got %v: %s", version, want, err, out)
		}
	}
}

// TestRunWrapperKeepsGateRecords: with MILES_CI_GATE_RECORD_DIR the wrapper
// keeps each passing attempt's merged record (ci_utils' BASE/KEY/attempt-N
// .merged.jsonl) when the runner prints its PASS line: a later file that
// rewrites it, or prints the line again, changes nothing; a retried file's
// record is its passing attempt's; a record behind a symlink is not read.
func TestRunWrapperKeepsGateRecords(t *testing.T) {
	needBash(t)
	base := t.TempDir()
	t.Setenv(PlanEnv, `["tests/e2e/gpu/test_a.py", "tests/e2e/gpu/test_b.py", "tests/e2e/gpu/test_c.py"]`)
	t.Setenv("MILES_CI_GATE_RECORD_DIR", base)
	runner := `
import hashlib, os, re, sys, time
base = os.environ["MILES_CI_GATE_RECORD_DIR"]
def merged(f, attempt, text):
    key = re.sub(r"[^A-Za-z0-9._-]", "_", f) + "-" + hashlib.sha1(f.encode()).hexdigest()[:10]
    os.makedirs(os.path.join(base, key), exist_ok=True)
    path = os.path.join(base, key, "attempt-%d.merged.jsonl" % attempt)
    open(path, "w").write(text)
    return path
a = merged("tests/e2e/gpu/test_a.py", 1, '{"metric": "m", "series": [[0, 1.0]]}\n')
print("[1/3] tests/e2e/gpu/test_a.py  PASS  elapsed=1s", flush=True)
time.sleep(1)  # the next file starts: a new process
open(a, "w").write('{"metric": "m", "series": [[0, 99.0]]}\n')
print("[1/3] tests/e2e/gpu/test_a.py  PASS  elapsed=1s", flush=True)
merged("tests/e2e/gpu/test_b.py", 2, '{"metric": "m", "series": []}\n')
print("[2/3] tests/e2e/gpu/test_b.py  FAIL  elapsed=1s exit=1", flush=True)
print("[2/3] tests/e2e/gpu/test_b.py  PASS  elapsed=1s retry_of=attempt=1", flush=True)
c = merged("tests/e2e/gpu/test_c.py", 1, "{}")
os.rename(os.path.dirname(c), os.path.dirname(c) + ".real")
os.symlink(os.path.dirname(c) + ".real", os.path.dirname(c))
print("[3/3] tests/e2e/gpu/test_c.py  PASS  elapsed=1s", flush=True)
`
	_, rec, _ := wrap(t, "--", "python3", "-c", runner)
	text := func(r report.GateRecord) string {
		if r.Record == nil {
			return "(none: " + r.Problem + ")"
		}
		return *r.Record
	}
	var got []string
	for _, r := range rec.GateRecords {
		got = append(got, fmt.Sprintf("%s %d %s", r.File, r.Attempt, strings.TrimSpace(text(r))))
	}
	want := []string{
		`tests/e2e/gpu/test_a.py 1 {"metric": "m", "series": [[0, 1.0]]}`,
		`tests/e2e/gpu/test_b.py 2 {"metric": "m", "series": []}`,
		`tests/e2e/gpu/test_c.py 1 (none: cannot be read (Not a directory))`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("wanted the records as each PASS line found them:\n%q\ngot\n%q", want, got)
	}
}
