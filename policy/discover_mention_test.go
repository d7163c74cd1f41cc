package policy

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMentionsRegistration checks the one-pass search against strings.Contains.
func TestMentionsRegistration(t *testing.T) {
	want := func(s string) bool {
		return strings.Contains(s, "register_cpu_ci") || strings.Contains(s, "register_cuda_ci")
	}
	cases := []string{"", "register_c", "register_cpu_ci", "register_cuda_ci", "xregister_cuda_cix",
		"register_cpu_c", "register_cud_ci", "rregister_cpu_ci", "register_register_cpu_ci", "register_cregister_cuda_ci",
		"# register_cpu_ci(...)\n", "register_rocm_ci()", "register_cpu_cj register_cuda_c"}
	pieces := []string{"register_", "register_c", "cpu_ci", "uda_ci", "pu_ci", "r", "e", "_", "c", "ci", "x", "regist", "er_cu", "\n"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		cases = append(cases, b.String())
	}
	if files, _ := filepath.Glob(filepath.Join("..", "testdata", "miles", "tests", "*", "*.py")); len(files) > 0 {
		for _, f := range files {
			if data, err := os.ReadFile(f); err == nil {
				cases = append(cases, string(data))
			}
		}
	}
	for _, s := range cases {
		if got := mentionsRegistration(s); got != want(s) {
			t.Fatalf("mentionsRegistration(%q) = %v, want %v", s, got, !got)
		}
	}
}
