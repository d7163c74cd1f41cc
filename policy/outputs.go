package policy

// Outputs are the resolve-ci-policy job's step outputs (rules §3, §4), as
// `miles-ci policy --json` and the Dagger module's policy function print them.
type Outputs struct {
	Cadence        Cadence  `json:"cadence"`
	RawLabels      []string `json:"raw_labels"`
	BypassFastfail bool     `json:"bypass_fastfail"`
	SkippedStages  []string `json:"skipped_stages"`
}
