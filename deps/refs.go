package deps

import (
	"fmt"

	"github.com/radixark/miles-ci/policy"
)

// Source says where a decision came from.
type Source string

// The sources a decision can carry (rules §6, §7).
const (
	// FromInput is a workflow_dispatch input.
	FromInput Source = "input"
	// FromCalled is an input of a called workflow (release CI's image_tag).
	FromCalled Source = "called"
	// FromPRImage is this PR's own published image, pr-<N>.
	FromPRImage Source = "pr-image"
	// FromPRBody is a directive line of the pull request description.
	FromPRBody Source = "pr-body"
	// FromLockfile is release-lock.json at the tested ref.
	FromLockfile Source = "lockfile"
	// FromDefault is the built-in default (a branch head or the default tag).
	FromDefault Source = "default"
	// FromBaked is the copy baked into the image, left untouched.
	FromBaked Source = "baked"
)

// Default branch heads fetched when nothing names a ref (CPU and CUDA).
const (
	DefaultSGLangBranch   = "sglang-miles"
	DefaultMegatronBranch = "miles-main"
)

// Ref is the decision for one dependency.
type Ref struct {
	// Ref is the value as named (e.g. #1234, a branch, a commit); "" when baked.
	Ref string `json:"ref"`
	// Fetch is what git fetch origin is given; "" when baked.
	Fetch string `json:"fetch"`
	// Source is where Ref came from.
	Source Source `json:"source"`
	// Line is the 1-based PR-body line for source pr-body, else 0.
	Line int `json:"line"`
}

// Origin is the human form of the source, e.g. "pr-body line 3".
func (r Ref) Origin() string {
	if r.Source == FromPRBody {
		return fmt.Sprintf("pr-body line %d", r.Line)
	}
	return string(r.Source)
}

// Inputs are the facts the dependency-ref steps read.
type Inputs struct {
	// Backend is cpu, cuda or rocm.
	Backend policy.Backend
	// PRBody is the pull request description ("" outside pull_request).
	PRBody string
	// SGLangInput is the workflow_dispatch input ci_sglang_pr.
	SGLangInput string
	// MegatronInput is the workflow_dispatch input ci_megatron_pr.
	MegatronInput string
	// Lock is release-lock.json at the tested ref, nil when there is none.
	// ROCm never reads it.
	Lock *Lock
}

// Decision is the dependency plan of one job.
type Decision struct {
	// Install is false when both dependencies keep the image's baked copies
	// (ROCm with nothing named); CPU and CUDA always install.
	Install bool `json:"install"`
	// SGLang is the sgl-project/sglang decision.
	SGLang Ref `json:"sglang"`
	// Megatron is the radixark/Megatron-LM decision.
	Megatron Ref `json:"megatron"`
	// Warnings are non-fatal findings, e.g. a directive repeated with another value.
	Warnings []string `json:"warnings"`
}

// dependency names one side and where its defaults live.
type dependency struct {
	key           string // PR-body directive
	input         string // workflow_dispatch input name
	defaultBranch string
	lockCommit    func(*Lock) string
}

var (
	sglangDep = dependency{KeySGLang, "ci_sglang_pr", DefaultSGLangBranch,
		func(l *Lock) string { return l.SGLangCommit }}
	megatronDep = dependency{KeyMegatron, "ci_megatron_pr", DefaultMegatronBranch,
		func(l *Lock) string { return l.MegatronCommit }}
)

// Resolve decides the SGLang and Megatron-LM refs of a job (rules §7).
//
// CPU and CUDA, per dependency: dispatch input, else the first PR-body
// directive, else the lockfile commit, else the default branch head; always
// installed. ROCm installs only when an input or directive names a ref, and
// then only the named side; the other keeps the baked copy.
//
// Every named value must be a valid pin; an invalid one is an error naming its
// source and line. A directive repeated with a different value is a warning.
func Resolve(in Inputs) (Decision, error) {
	if _, known := policy.Profile(in.Backend); !known {
		return Decision{}, fmt.Errorf("unknown backend %q for dependency refs; use cpu, cuda or rocm", in.Backend)
	}
	d := Decision{Warnings: []string{}}
	var err error
	if d.SGLang, err = resolveOne(in, sglangDep, in.SGLangInput, &d.Warnings); err != nil {
		return Decision{}, err
	}
	if d.Megatron, err = resolveOne(in, megatronDep, in.MegatronInput, &d.Warnings); err != nil {
		return Decision{}, err
	}
	d.Install = d.SGLang.Source != FromBaked || d.Megatron.Source != FromBaked
	return d, nil
}

func resolveOne(in Inputs, dep dependency, input string, warnings *[]string) (Ref, error) {
	directives := FindDirectives(in.PRBody, dep.key)
	for _, later := range directives[min(1, len(directives)):] {
		if later.Value != directives[0].Value {
			*warnings = append(*warnings, fmt.Sprintf(
				"pr-body line %d: %s: %s is ignored; line %d already set %s (the first directive wins; remove the other line)",
				later.Line, dep.key, later.Value, directives[0].Line, directives[0].Value))
		}
	}

	if input != "" {
		if err := CheckPin(input); err != nil {
			return Ref{}, fmt.Errorf("dispatch input %s: value %q %s; give a branch, tag, commit or PR number, e.g. %s=#1234 or %s=%s",
				dep.input, input, err, dep.input, dep.input, dep.defaultBranch)
		}
		if len(directives) > 0 {
			if err := CheckPin(directives[0].Value); err != nil {
				*warnings = append(*warnings, fmt.Sprintf(
					"pr-body line %d: %s: value %q %s; it is ignored because the dispatch input %s wins, but fix the line",
					directives[0].Line, dep.key, directives[0].Value, err, dep.input))
			}
		}
		return Ref{Ref: input, Fetch: FetchRef(input), Source: FromInput}, nil
	}
	if len(directives) > 0 {
		first := directives[0]
		if err := CheckPin(first.Value); err != nil {
			return Ref{}, fmt.Errorf("pr-body line %d: %s: value %q %s; write a branch, tag, commit or PR number, e.g. \"%s: #1234\" or \"%s: %s\"",
				first.Line, dep.key, first.Value, err, dep.key, dep.key, dep.defaultBranch)
		}
		return Ref{Ref: first.Value, Fetch: FetchRef(first.Value), Source: FromPRBody, Line: first.Line}, nil
	}
	if policy.ProfileOf(in.Backend).BakedDeps {
		return Ref{Source: FromBaked}, nil
	}
	if in.Lock != nil {
		commit := dep.lockCommit(in.Lock)
		return Ref{Ref: commit, Fetch: commit, Source: FromLockfile}, nil
	}
	return Ref{Ref: dep.defaultBranch, Fetch: dep.defaultBranch, Source: FromDefault}, nil
}

// NeedsROCmPatch reports whether the ROCm patch step (rules §8) runs: on
// ROCm, after a named Megatron-LM ref replaced the baked copy.
func NeedsROCmPatch(backend policy.Backend, d Decision) bool {
	return backend == policy.ROCM && d.Megatron.Source != FromBaked
}

// SyncSteps are the argv lists that move a dependency checkout to a decided
// ref, run in the checkout (/sgl-workspace/sglang or /root/Megatron-LM) as
// the workflows do. A baked ref needs no steps.
func SyncSteps(r Ref) [][]string {
	if r.Source == FromBaked || r.Fetch == "" {
		return nil
	}
	return [][]string{
		{"git", "reset", "--hard", "HEAD"},
		{"git", "clean", "-fd"},
		{"git", "fetch", "origin", r.Fetch},
		{"git", "checkout", "-f", "FETCH_HEAD"},
	}
}
