package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/radixark/miles-ci/internal/testfiles"
)

func TestParseFile(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []Registration
	}{
		{"keywords", `register_cuda_ci(est_time=600, suite="stage-c-2-gpu-h200", labels=["megatron", "short"], nightly=True, disabled="why")`,
			[]Registration{{Backend: CUDA, EstTime: 600, Suite: "stage-c-2-gpu-h200", Labels: []string{"megatron", "short"}, Nightly: true, Disabled: reason("why"), Line: 1}}},
		{"positional pair", "\n\nregister_rocm_ci(1.5, 'stage-c-4-gpu-mi350', labels=['amd'])",
			[]Registration{{Backend: ROCM, EstTime: 1.5, Suite: "stage-c-4-gpu-mi350", Labels: []string{"amd"}, Line: 3}}},
		{"labels None and disabled None", `register_cpu_ci(3, "stage-b-cpu", labels=None, disabled=None, nightly=False)`,
			[]Registration{{Backend: CPU, EstTime: 3, Suite: "stage-b-cpu", Labels: []string{}, Line: 1}}},
		{"bool est_time is an int", `register_cpu_ci(True, "stage-b-cpu")`,
			[]Registration{{Backend: CPU, EstTime: 1, Suite: "stage-b-cpu", Labels: []string{}, Line: 1}}},
		{"several in order", "register_cpu_ci(1, 'stage-b-cpu'); register_cuda_ci(2, 'stage-c-2-gpu-h200', labels=['lora'])\nregister_rocm_ci(3, 'nightly-stage-c-2-gpu-mi350', labels=['amd'])",
			[]Registration{
				{Backend: CPU, EstTime: 1, Suite: "stage-b-cpu", Labels: []string{}, Line: 1},
				{Backend: CUDA, EstTime: 2, Suite: "stage-c-2-gpu-h200", Labels: []string{"lora"}, Line: 1},
				{Backend: ROCM, EstTime: 3, Suite: "nightly-stage-c-2-gpu-mi350", Labels: []string{"amd"}, Line: 2}}},
		{"unknown suite names are kept (run_suite rejects them per run)", `register_cpu_ci(1, "stage-z")`,
			[]Registration{{Backend: CPU, EstTime: 1, Suite: "stage-z", Labels: []string{}, Line: 1}}},
		{"calls in strings, blocks and attributes do not count", "'''\nregister_cpu_ci(1, 's')\n'''\nif x:\n    register_cpu_ci(1, 's')\nci.register_cpu_ci(1, 's')\n# register_cpu_ci(1, 's')\n", []Registration{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseFile("tests/e2e/test_x.py", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.want {
				tc.want[i].File = "tests/e2e/test_x.py"
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("wanted %+v,\n got %+v", tc.want, got)
			}
		})
	}
}

func TestLoadRegistryDiscovery(t *testing.T) {
	root := t.TempDir()
	testfiles.Write(t, root, "tests/fast/test_b.py", "x = 1\n")
	testfiles.Write(t, root, "tests/fast/sub/test_a.py", `register_cpu_ci(2, "stage-b-cpu")`+"\n")
	testfiles.Write(t, root, "tests/fast/.hidden/test_h.py", "this is not python (\n")
	testfiles.Write(t, root, "tests/fast/helper.py", "not a test (\n")
	testfiles.Write(t, root, "tests/e2e/test_Z.py", `register_cuda_ci(5, "stage-c-2-gpu-h200", labels=["eval"])`+"\n")
	testfiles.Write(t, root, "tests/ci/test_ci.py", `register_cpu_ci(1, "stage-a-cpu")`+"\n")
	testfiles.Write(t, root, "tests/other/test_o.py", "not scanned (\n")
	testfiles.Write(t, root, "tests/fast-gpu/deep/er/test_g.py", `register_cuda_ci(5, "stage-b-2-gpu-h200", labels=["fsdp"])`+"\n")
	reg, err := LoadRegistry(root)
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{"tests/ci/test_ci.py", "tests/e2e/test_Z.py", "tests/fast-gpu/deep/er/test_g.py", "tests/fast/sub/test_a.py", "tests/fast/test_b.py"}
	if !slices.Equal(reg.Files, wantFiles) {
		t.Errorf("wanted %v, got %v", wantFiles, reg.Files)
	}
	last := reg.Registrations[len(reg.Registrations)-1]
	if !last.Implicit || last.Suite != "stage-a-cpu" || last.EstTime != 1 || last.Backend != CPU {
		t.Errorf("wanted an implicit stage-a-cpu registration, got %+v", last)
	}
}

func TestLoadRegistryReportsFirstFaultInFileOrder(t *testing.T) {
	root := t.TempDir()
	testfiles.Write(t, root, "tests/e2e/test_b.py", "def f(:\n")
	testfiles.Write(t, root, "tests/e2e/test_a.py", "x = 1\n")
	_, err := LoadRegistry(root)
	if err == nil || !strings.HasPrefix(err.Error(), "tests/e2e/test_a.py: No CI registry found in tests/e2e/test_a.py") {
		t.Errorf("wanted the fault of test_a.py first, got %v", err)
	}
}

func FuzzParseFile(f *testing.F) {
	seeds := []string{
		`register_cuda_ci(est_time=600, suite="stage-c-2-gpu-h200", labels=["megatron"])`,
		"register_cpu_ci(1, 's'); x = '''\nregister_cpu_ci(2, 's')\n'''",
		"if x:\n\tregister_cpu_ci(1, 's')\n  y = 2\n",
		"register_cpu_ci(*a, **k)", "register_cpu_ci(0x_1f, b's' 's')", "(register_cpu_ci)(1, f's{x}')",
		"x = [\n(\n{\n", "\\\n", "'''", "r'\\'", "register_cpu_ci(1, 's', labels=[[[]]])", "\xff\xfe", "\x00",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		regs, err := ParseFile("tests/e2e/test_fuzz.py", src)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "tests/e2e/test_fuzz.py: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, r := range regs {
			if r.Labels == nil || r.Line < 1 {
				t.Fatalf("incomplete registration %+v", r)
			}
		}
	})
}

func TestDiscoverFollowsFolderLinksWithoutLooping(t *testing.T) {
	root := t.TempDir()
	testfiles.Write(t, root, "shared/test_linked.py", `register_cpu_ci(1, "stage-b-cpu")`+"\n")
	if err := os.MkdirAll(filepath.Join(root, "tests", "e2e"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "shared"), filepath.Join(root, "tests", "e2e", "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "tests", "e2e"), filepath.Join(root, "tests", "e2e", "loop")); err != nil {
		t.Fatal(err)
	}
	files, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 || files[0] != "tests/e2e/linked/test_linked.py" {
		t.Errorf("wanted the linked file first, got %v", files)
	}
	if len(files) > 20 {
		t.Errorf("wanted a bounded walk through the loop, got %d files", len(files))
	}
}

func TestLoadRegistryRefusesAWrongCheckout(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	const fix = "; give --repo the folder of a Miles checkout (the one that holds tests/), or run from it"
	tests := []struct {
		name, root, want string
	}{
		{"missing", filepath.Join(root, "typo"), filepath.Join(root, "typo") + " does not exist: not a Miles checkout" + fix},
		{"a file", file, file + " is not a folder: not a Miles checkout" + fix},
		{"no tests folder", root, root + " has no tests/ folder: not a Miles checkout" + fix},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for name, load := range map[string]func(string) error{
				"LoadRegistry": func(r string) error { _, err := LoadRegistry(r); return err },
				"Discover":     func(r string) error { _, err := Discover(r); return err },
			} {
				err := load(tt.root)
				var ce *CheckoutError
				if !errors.As(err, &ce) || err.Error() != tt.want {
					t.Errorf("%s: wanted %q, got %v", name, tt.want, err)
				}
			}
		})
	}
	t.Run("empty means the current folder", func(t *testing.T) {
		testfiles.Write(t, root, "tests/fast/test_a.py", "x = 1\n")
		t.Chdir(root)
		for _, r := range []string{"", "."} {
			reg, err := LoadRegistry(r)
			if err != nil || reg.Root != "." || len(reg.Files) != 1 {
				t.Errorf("LoadRegistry(%q): wanted root . with one file, got %+v, %v", r, reg, err)
			}
		}
	})
}

// TestLoadRegistryBoundedReads checks that a test file that is not a regular
// file, or is bigger than 4 MiB, is a registry error naming it, and that a
// FIFO never blocks the read.
func TestLoadRegistryBoundedReads(t *testing.T) {
	const fix = "; make it a readable Python file of at most 4 MiB, or remove it"
	tests := []struct {
		name string
		make func(t *testing.T, path string)
		want string
	}{
		{"fifo", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip(err)
			}
		}, "tests/e2e/test_x.py: the test file is a named pipe (FIFO), not a regular file" + fix},
		{"symlink to /dev/zero", func(t *testing.T, p string) {
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Skip(err)
			}
		}, "tests/e2e/test_x.py: the test file is a device, not a regular file" + fix},
		{"too big", func(t *testing.T, p string) {
			if err := os.WriteFile(p, []byte("# "+strings.Repeat("x", 4<<20)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "tests/e2e/test_x.py: the test file is 4194307 bytes, more than the 4 MiB (4194304 bytes) a test file may be" + fix},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			testfiles.Write(t, root, "tests/e2e/test_a.py", `register_cpu_ci(1, "stage-b-cpu")`+"\n")
			tt.make(t, filepath.Join(root, "tests", "e2e", "test_x.py"))
			done := make(chan error, 1)
			go func() {
				_, err := LoadRegistry(root)
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || err.Error() != tt.want {
					t.Errorf("wanted %q, got %v", tt.want, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("LoadRegistry blocked")
			}
		})
	}
}

// TestScanKeepsCallsPastTheReadBuffer reads trees whose files' calls are
// checked at once (the tables are there), after the scan (they come late)
// and half and half: the registrations, or the fault, are the same, though
// each worker reads every file into one buffer that the next file overwrites.
func TestScanKeepsCallsPastTheReadBuffer(t *testing.T) {
	tables := BuiltinTables()
	for _, mention := range []bool{false, true} {
		root := t.TempDir()
		for i := range 60 {
			if i%3 == 0 {
				testfiles.Write(t, root, fmt.Sprintf("tests/e2e/test_%02d.py", i),
					fmt.Sprintf("# %s\nregister_cuda_ci(est_time=%d, suite=\"stage-c-2-gpu-h200\", labels=[\"eval\"])\n", strings.Repeat("x", 40*i), 100+i))
				continue
			}
			body := fmt.Sprintf("%sregister_cpu_ci(est_time=%d, suite=\"stage-b-cpu\")\n", strings.Repeat("y = 1\n", i), 10+i)
			if i%7 == 0 {
				body = "y = 2\n" // implicit
				if mention && i == 49 {
					body = "x = 'register_cpu_ci' and 1\n" // a mention without a call: a fault
				}
			}
			testfiles.Write(t, root, fmt.Sprintf("tests/fast/test_%02d.py", i), body)
		}
		want, wantErr := tables.LoadRegistry(root) // every file checked at once
		if (wantErr != nil) != mention {
			t.Fatalf("mention %v: got error %v", mention, wantErr)
		}
		var asked atomic.Int64
		for name, ready := range map[string]func() *Tables{
			"late": func() *Tables { return nil },
			"midway": func() *Tables {
				if asked.Add(1) > 30 {
					return tables
				}
				return nil
			},
		} {
			got, err := scanRegistry(root, ready).registry(tables)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("%s: wanted error %v, got %v", name, wantErr, err)
			}
			if err == nil && !reflect.DeepEqual(got.Registrations, want.Registrations) {
				t.Errorf("%s: registrations differ:\nwanted %+v\ngot    %+v", name, want.Registrations, got.Registrations)
			}
		}
	}
}
