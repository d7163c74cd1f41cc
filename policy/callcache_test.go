package policy

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/radixark/miles-ci/internal/testfiles"
	"github.com/radixark/miles-ci/policy/callcache"
	"github.com/radixark/miles-ci/policy/pysource"
)

// withCallCache scans with policy/callcache in dir for the rest of the test.
func withCallCache(t *testing.T, dir string) {
	t.Helper()
	UseCallCache(func(root string) CallCache { return callcache.Open(dir, root, "test") })
	t.Cleanup(func() { UseCallCache(nil) })
}

// TestCallCacheGivesTheSameRegistry: a checkout scanned with the cache,
// cold, warm and after its files change, gives the registry (or the fault)
// a scan without one gives.
func TestCallCacheGivesTheSameRegistry(t *testing.T) {
	root := filepath.Join(t.TempDir(), "miles")
	testfiles.CopyTree(t, filepath.Join("..", "testdata", "miles"), root)
	cacheDir := t.TempDir()
	check := func(step string) {
		t.Helper()
		UseCallCache(nil)
		want, wantErr := LoadRegistry(root)
		withCallCache(t, cacheDir)
		for _, run := range []string{"cold or changed", "warm"} {
			got, err := LoadRegistry(root)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("%s, %s: wanted error %v, got %v", step, run, wantErr, err)
			}
			if err == nil && !reflect.DeepEqual(got.Registrations, want.Registrations) {
				t.Fatalf("%s, %s: registrations differ:\nwanted %+v\ngot    %+v", step, run, want.Registrations, got.Registrations)
			}
		}
	}
	check("first scan")
	file := filepath.Join(root, "tests", "e2e", "megatron", "test_glm4_9b.py")
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "est_time=") {
		t.Fatalf("%s no longer has est_time=; change another argument", file)
	}
	testfiles.Write(t, filepath.Dir(file), "test_glm4_9b.py", strings.Replace(string(src), "est_time=", "est_time=1 + ", 1))
	check("a changed registration") // not a constant any more: a fault
	testfiles.Write(t, filepath.Dir(file), "test_glm4_9b.py", string(src)+"\ndef broken(:\n")
	check("a file that no longer parses")
	testfiles.Write(t, filepath.Dir(file), "test_glm4_9b.py", string(src))
	check("the file as it was")
}

// TestCallCacheIsAsked: the scan takes a file's calls from the cache by the
// hash of its text (a planted entry changes the answer), and parses a file
// the cache does not have.
func TestCallCacheIsAsked(t *testing.T) {
	root := t.TempDir()
	planted := "register_cpu_ci(est_time=5, suite=\"stage-a-cpu\")\n"
	testfiles.Write(t, root, "tests/e2e/test_a.py", planted)
	testfiles.Write(t, root, "tests/e2e/test_b.py", "register_cpu_ci(est_time=7, suite=\"stage-a-cpu\")\n")
	fake := &plantedCache{sum: sha256.Sum256([]byte(planted)), calls: mustCalls(t, "register_cpu_ci(est_time=99, suite=\"stage-a-cpu\")\n")}
	UseCallCache(func(string) CallCache { return fake })
	t.Cleanup(func() { UseCallCache(nil) })
	reg, err := BuiltinTables().LoadRegistry(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range reg.Registrations {
		got = append(got, fmt.Sprintf("%s %v", r.File, r.EstTime))
	}
	if want := "tests/e2e/test_a.py 99 tests/e2e/test_b.py 7"; strings.Join(got, " ") != want {
		t.Errorf("wanted %q, got %q", want, strings.Join(got, " "))
	}
	if fake.kept.Load() != 1 || !fake.done {
		t.Errorf("wanted the parsed file kept and the scan ended, got kept %d, done %v", fake.kept.Load(), fake.done)
	}
}

func mustCalls(t *testing.T, src string) []pysource.Call {
	t.Helper()
	calls, err := registrationCalls("x.py", src)
	if err != nil {
		t.Fatal(err)
	}
	return calls
}

type plantedCache struct {
	sum   [sha256.Size]byte
	calls []pysource.Call
	kept  atomic.Int32 // Keep is called by the scan's workers
	done  bool
}

func (c *plantedCache) Calls(sum [sha256.Size]byte) ([]pysource.Call, bool) {
	return c.calls, sum == c.sum
}
func (c *plantedCache) Keep([sha256.Size]byte, []pysource.Call) { c.kept.Add(1) }
func (c *plantedCache) Done()                                   { c.done = true }
