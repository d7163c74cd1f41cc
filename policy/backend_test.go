package policy

import (
	"reflect"
	"slices"
	"testing"
)

// TestBackendProfiles pins each row of the backend profile table to the
// values the rules give (rules §1, §2, §5, §6, §7, §9, §10, §11.6), written
// out here rather than through the package's constants, so a changed
// constant shows up as a changed rule.
func TestBackendProfiles(t *testing.T) {
	gpuUlimits := []Ulimit{ // §9: memlock unlimited, stack 67108864 (in KiB), nofile 65535
		{Name: "memlock", Flag: "-l", Value: "unlimited"},
		{Name: "stack", Flag: "-s", Value: "65536"},
		{Name: "nofile", Flag: "-n", Value: "65535"},
	}
	want := []BackendProfile{
		{
			Backend:             "cpu",
			Enum:                "CPU",             // §5: "Hardware: CPU"
			RegisterFunc:        "register_cpu_ci", // §2: no label needed
			PRWorkflow:          ".github/workflows/pr-test.yml",
			RunWorkflow:         ".github/workflows/_run-cpu-ci.yml",
			Hosted:              true,          // §1: GitHub-hosted ubuntu-latest
			StageTimeoutMinutes: 60,            // 31f1ca9's _run-cpu-ci.yml
			StageImage:          "python:3.11", // §1: bare Python 3.11 + uv
			ImageRepo:           "radixark/miles",
			DefaultImageTag:     "dev",
			PRImageTag:          true, // §6: the CUDA/CPU workflow
			GPU:                 "none",
			Secrets:             []string{"HF_TOKEN"}, // §9
			FileSecrets:         []string{"HF_TOKEN"},
			Pytest:              true, // §5: pytest FILES -v; §10: pytest FILE -v -x
			MaxAttempts:         1,
		},
		{
			Backend:             "cuda",
			Enum:                "CUDA",
			RegisterFunc:        "register_cuda_ci",
			NeedsLabels:         true, // §2
			PRWorkflow:          ".github/workflows/pr-test.yml",
			RunWorkflow:         ".github/workflows/_run-ci.yml",
			StageTimeoutMinutes: 360, // GitHub's default: the GPU jobs set none
			ImageRepo:           "radixark/miles",
			DefaultImageTag:     "dev",
			PRImageTag:          true, // §6
			GPU:                 "nvidia",
			VisibleDevices:      "CUDA_VISIBLE_DEVICES", // §9
			ShmBytes:            32 << 30,
			Ulimits:             gpuUlimits,
			DataMounts:          true,
			Privileged:          true,
			Secrets:             []string{"WANDB_API_KEY", "NEON_DATABASE_URL"}, // §9
			FileSecrets:         []string{"WANDB_API_KEY"},                      // §10
			MatchAllOnDispatch:  true,                                           // §1
			MaxAttempts:         1,
			FileTimeoutS:        1800, // §5: timeout_per_file
		},
		{
			Backend:             "rocm",
			Enum:                "ROCM",
			RegisterFunc:        "register_rocm_ci",
			NeedsLabels:         true, // §2
			PRWorkflow:          ".github/workflows/pr-test-rocm.yml",
			RunWorkflow:         ".github/workflows/_run-ci-rocm.yml",
			StageTimeoutMinutes: 360,
			ImageRepo:           "rocm/sgl-dev",
			DefaultImageTag:     "miles-rocm720-mi35x", // §6: the dispatch input only
			BakedDeps:           true,                  // §7: only a named side is installed
			GPU:                 "amd",
			VisibleDevices:      "HIP_VISIBLE_DEVICES", // §9
			ShmBytes:            32 << 30,
			Ulimits:             gpuUlimits, // §9: the same options and mounts
			DataMounts:          true,
			Privileged:          true,
			Secrets:             []string{"WANDB_API_KEY"}, // §9: WANDB_API_KEY only
			FileSecrets:         []string{"WANDB_API_KEY"},
			FileRunLast:         true, // §10: ROCm-only files (a miles-ci improvement)
			MatchAllOnDispatch:  true,
			RetryArgs:           []string{"--enable-retry", "--max-attempts", "2"}, // §1
			MaxAttempts:         2,
			FileTimeoutS:        2400, // §5: 1800, +600 with retry
		},
	}
	if got := Backends(); !slices.Equal(got, []Backend{CPU, CUDA, ROCM}) {
		t.Errorf("wanted the backends cpu, cuda, rocm, got %v", got)
	}
	for _, w := range want {
		t.Run(string(w.Backend), func(t *testing.T) {
			got, ok := Profile(w.Backend)
			if !ok {
				t.Fatalf("wanted a profile of %s, got none", w.Backend)
			}
			if !reflect.DeepEqual(got, w) {
				t.Errorf("wanted\n%+v\ngot\n%+v", w, got)
			}
		})
	}
	if len(backendProfiles) != len(want) {
		t.Errorf("wanted %d rows, got %d", len(want), len(backendProfiles))
	}
}

// TestProfileIsACopy holds that a caller cannot change the table through a row.
func TestProfileIsACopy(t *testing.T) {
	p := ProfileOf(ROCM)
	p.Secrets[0], p.RetryArgs[0], p.Ulimits[0].Value = "X", "X", "X"
	q := ProfileOf(ROCM)
	if q.Secrets[0] != "WANDB_API_KEY" || q.RetryArgs[0] != "--enable-retry" || q.Ulimits[0].Value != "unlimited" {
		t.Errorf("wanted an unchanged ROCm row, got %+v", q)
	}
}

func TestProfileUnknownBackend(t *testing.T) {
	if p, ok := Profile("tpu"); ok || !reflect.DeepEqual(p, BackendProfile{}) {
		t.Errorf("wanted no profile of tpu, got %+v, %v", p, ok)
	}
	if _, err := ParseBackend("tpu"); err == nil || err.Error() != `unknown hardware backend "tpu"; use one of cpu, cuda, rocm` {
		t.Errorf("wanted the unknown-backend error, got %v", err)
	}
	for _, s := range BackendNames() {
		if b, err := ParseBackend(s); err != nil || string(b) != s {
			t.Errorf("wanted %s to parse, got %q, %v", s, b, err)
		}
	}
}

// TestRowsAgree holds the facts that follow from others: a backend with a
// GPU splits it with a visible-devices variable; a per-file timeout floor
// exactly where the runner is not pytest; retry arguments exactly where a
// file may run twice; a fixed image or an image family for every row.
func TestRowsAgree(t *testing.T) {
	for _, p := range backendProfiles {
		if (p.GPU == NoGPU) != (p.VisibleDevices == "") {
			t.Errorf("%s: GPU %s with visible-devices variable %q", p.Backend, p.GPU, p.VisibleDevices)
		}
		if p.Pytest != (p.FileTimeoutS == 0) {
			t.Errorf("%s: pytest %v with a per-file timeout floor of %d", p.Backend, p.Pytest, p.FileTimeoutS)
		}
		if (len(p.RetryArgs) > 0) != (p.MaxAttempts > 1) {
			t.Errorf("%s: retry args %v with %d attempts", p.Backend, p.RetryArgs, p.MaxAttempts)
		}
		if p.ImageRepo == "" || p.DefaultImageTag == "" || p.RegisterFunc == "" || p.Enum == "" || p.RunWorkflow == "" || p.PRWorkflow == "" {
			t.Errorf("%s: a row needs an image family and tag, a register function, an enum name and its workflows: %+v", p.Backend, p)
		}
		if registerFuncs[p.RegisterFunc] != p.Backend || backendKeys[p.Enum] != p.Backend || backendKeys[string(p.Backend)] != p.Backend {
			t.Errorf("%s: the registry and CI_SUITES readers do not map %s and %s to it", p.Backend, p.RegisterFunc, p.Enum)
		}
	}
}

// TestEveryBackendHasSuites holds that a row added to the table has its
// field in BackendSuites, the JSON shape of the suites table.
func TestEveryBackendHasSuites(t *testing.T) {
	for _, b := range Backends() {
		if len(BuiltinTables().Suites.Of(b)) == 0 {
			t.Errorf("wanted built-in suites of %s (a BackendSuites field and rules §1's list), got none", b)
		}
	}
}
