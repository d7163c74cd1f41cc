package pipeline_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/radixark/miles-ci/pipeline"
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

// TestRunScript checks the run wrapper: it exits 0 whatever the command
// does, keeps the exit status, the status lines and a log with every secret
// value masked.
func TestRunScript(t *testing.T) {
	needBash(t)
	const secret = "s3cr3t-value-42"
	cmd := `echo "token=$WANDB_API_KEY"; echo "[1/2] tests/e2e/test_a.py  PASS  elapsed=3s"; ` +
		`echo "[2/2] tests/e2e/test_b.py  FAIL  elapsed=1s exit=1" >&2; echo "limit=$(ulimit -n)"; exit 7`
	out, dir := runScript(t, []string{"WANDB_API_KEY=" + secret}, "run",
		"--ulimit", "-n", "256", "--ulimit", "-c", "not-a-number", "--mask", "WANDB_API_KEY", "--mask", "UNSET_SECRET", "--", "sh", "-c", cmd)
	log := read(t, filepath.Join(dir, "run.log"))
	for _, text := range []string{out, log} {
		if strings.Contains(text, secret) || !strings.Contains(text, "token=***") {
			t.Errorf("wanted the secret masked as ***, got %q", text)
		}
	}
	if !strings.Contains(log, "limit=256") {
		t.Errorf("wanted the ulimit raised (lowered here) to 256, got %q", log)
	}
	if !strings.HasPrefix(log, "::warning::could not raise ulimit -c to not-a-number (needs CAP_SYS_RESOURCE); the engine's limit ") {
		t.Errorf("wanted a refused limit reported at the top of the log, got %q", log)
	}
	if got := read(t, filepath.Join(dir, "exit-code")); got != "7\n" {
		t.Errorf("wanted exit-code %q, got %q", "7\n", got)
	}
	want := "[1/2] tests/e2e/test_a.py  PASS  elapsed=3s\n[2/2] tests/e2e/test_b.py  FAIL  elapsed=1s exit=1\n"
	if got := read(t, filepath.Join(dir, "status.log")); got != want {
		t.Errorf("wanted status.log %q, got %q", want, got)
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
