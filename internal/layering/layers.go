// Package layering holds the module's layers and the rules on its imports,
// and Check, which holds every package to them (TestLayering runs it on the
// module; docs/architecture.md, "The layering rule", explains them).
package layering

// Layers gives every package of the module (by its path in the module, "."
// for the root) a layer: a package imports only packages of a lower layer.
// This table is the authority; the table in docs/architecture.md must agree
// with it (TestLayersDocumented). A new package gets a row here: the lowest
// layer above everything it imports.
var Layers = map[string]int{
	// Leaves: a package under internal/ imports no package of miles-ci.
	"internal/fsinput":     0,
	"internal/atomicwrite": 0,
	"internal/lazyre":      0,
	"internal/nearest":     0,
	"internal/plural":      0,
	"internal/yamlnode":    0,
	"internal/encode":      0,
	"internal/hostexec":    0,
	"internal/resultsdir":  0,
	"internal/printable":   0,
	"internal/testfiles":   0,
	"internal/typedjson":   0,
	"internal/layering":    0,
	"internal/dagger":      0,
	// Python's json and str as Miles' scripts print them: below the
	// reader of Python source, which renders its answers with it.
	"pyjson": 0,

	// The decisions.
	"policy/pysource": 1,
	"gitrepo":         1,
	"device":          1,
	"timeline":        1,
	"hostgpu":         2,
	"policy":          2,
	"metricgate":      2,
	"comment":         2,
	"deps":            3,
	"estimate":        3,
	"hostgpu/detect":  3,
	"triage":          3,
	// The graph hands each unit its image as deps decided it.
	"cirun": 4,
	// The what-if drives the graph with predicted durations.
	"whatif": 5,

	// What renders and runs them.
	"report":                    4,
	"report/htmlpage":           5,
	"history":                   5,
	"hostlock":                  5,
	"history/historytest":       6,
	"stagerun":                  5,
	"checkoutpy":                5,
	"github":                    5,
	"github/githubtest":         5,
	"github/githubtest/standin": 6,
	"comment/commenttest":       6,
	"workflows":                 6,
	"ghoutput":                  6,

	// The use cases both front ends call, then those only the command
	// calls (the module links neither history driver: ModuleOmits).
	"usecase":            7,
	"usecase/ci":         8,
	"usecase/runhistory": 8,
	"usecase/gatestore":  8,

	// The engine adapter of the command, then the front ends.
	"cmd/miles-ci/engine": 8,
	"cmd/miles-ci/cli":    9,
	".":                   9,
	"cmd/miles-ci":        10,
}

// DaggerUsers are the only packages that may import a Dagger SDK (see
// isDaggerSDK): the module at the root through its generated client, the
// generated client itself, and the engine adapter both front ends use
// (cmd/miles-ci/engine). Everything else reaches a container through
// stagerun.Container.
var DaggerUsers = []string{".", "internal/dagger", "cmd/miles-ci/engine"}

// ModuleOmits are the packages the Dagger module (the root, ".") may not
// depend on, each with everything under it: the runtime history and its
// drivers, which no module function uses (only the command records, imports
// and calibrates). They would be linked into every engine's build of the
// module for nothing.
var ModuleOmits = []string{ModulePath + "/history", "modernc.org/sqlite", "github.com/jackc/pgx/v5"}

// Domain are the packages that decide and describe (the plan as data): none
// of them may reach a process or the network, not even through another
// package, so none of these is among their dependencies.
var Domain = []string{"policy/pysource", "device", "hostgpu", "timeline", "policy", "metricgate", "deps", "estimate", "cirun", "triage", "whatif", "report", "report/htmlpage", "stagerun", "workflows", "comment", "pyjson"}

// DomainForbidden are the standard packages no Domain package may depend on:
// running a process and the network (net/url and net/netip parse text and are
// allowed). One message names the first a package reaches.
var DomainForbidden = []string{"os/exec", "net/http", "net"}

// FrontEndCalls are the rules of the front ends' own code (not their
// imports: they name decision packages' types, enums and constants freely):
// the listed front ends call no function of the listed decision packages, but
// for the Allowed ones, which name or parse a closed set for a flag. Every
// decision goes through a usecase request.
var FrontEndCalls = struct {
	FrontEnds, Decisions, Allowed []string
}{
	FrontEnds: []string{"cmd/miles-ci/cli", "."},
	Decisions: []string{"policy", "deps"},
	Allowed:   []string{"policy.BackendNames", "policy.ParseCadence"},
}
