package policy

// Backend is the hardware backend a registration or stage targets.
type Backend string

// The three backends of Miles CI.
const (
	CPU  Backend = "cpu"
	CUDA Backend = "cuda"
	ROCM Backend = "rocm"
)

// Registration is one register_*_ci(...) call of a test file (or the implicit
// registration of a tests/fast/ file that has none).
type Registration struct {
	// File is the repo-relative path with '/' separators.
	File string `json:"file"`
	// Backend is cpu, cuda or rocm, from the function name.
	Backend Backend `json:"backend"`
	// EstTime is the estimated run time in seconds.
	EstTime float64 `json:"est_time"`
	// Suite is the suite (= stage) name.
	Suite string `json:"suite"`
	// Labels are the domain labels, in source order; empty means always selected.
	Labels []string `json:"labels"`
	// Hardware are the GPU generations a CUDA test supports, in source order
	// (rules §11.2); empty under the 31f1ca9 rules and for CPU and ROCm.
	Hardware []string `json:"hardware,omitempty"`
	// NumGPUs is num_gpus= of a CUDA test under the B200 pool rules (rules
	// §11.8), 0 when not given: Tables.RequiredGPUs is the count it runs at.
	NumGPUs int `json:"num_gpus,omitempty"`
	// Nightly marks a registration admitted only by nightly, weekly and release cadences.
	Nightly bool `json:"nightly"`
	// Disabled is nil when enabled, else the reason the test is skipped.
	Disabled *string `json:"disabled"`
	// Implicit is true for a tests/fast/ file registered by convention.
	Implicit bool `json:"implicit"`
	// Line is the 1-based line of the call (0 for an implicit registration).
	Line int `json:"line"`
}
