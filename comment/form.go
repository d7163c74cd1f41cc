package comment

import (
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/radixark/miles-ci/policy/pysource"
)

// ScriptFile, PolicyFile and WorkflowFile are the gateway's files in a
// Miles checkout (rules §15): the script decides, the policy grants, the
// workflow runs the script in its modes.
const (
	ScriptFile   = ".github/workflows/scripts/comment_ci_command.py"
	PolicyFile   = ".github/workflows/policies/comment-command-access.json"
	WorkflowFile = ".github/workflows/comment-ci-command.yml"
)

// Form is one form Miles' gateway took (its script, policy and workflow
// changed together): everything that differs between forms is a field here,
// and Forms is the one table of them.
type Form struct {
	// Name says what the form adds; Miles names where it appears.
	Name, Miles string
	// Markers are COMMAND_MARKERS: a comment holding one that is not an exact
	// command is refused with NotExact.
	Markers  []string
	NotExact string
	// LabelPattern is LABEL_PATTERN, the shape of a label the policy may expose.
	LabelPattern string
	// RunFile: the /rerun-test command and the policy's run_test_file.
	RunFile bool
	// RunDetails: /rerun-test's dispatch asks for the run's details (200,
	// its link checked and printed as workflow_run_url), the preflight writes
	// success_reaction, and the acknowledge and reply modes exist.
	RunDetails bool
	// declares is what the form's script declares at its top level, by name
	// (the text declText reads): the form is the checkout's when every one
	// of these reads the same there.
	declares map[string]string
}

// The declarations every form shares, and those that tell the forms apart.
const (
	declCommandPattern = `re . compile ( "/(run-ci-[A-Za-z0-9][A-Za-z0-9_.-]*|bypass-fastfail)" )`
	declNarrowLabels   = `re . compile ( "(?:run-ci-[A-Za-z0-9][A-Za-z0-9_.-]*|bypass-fastfail)" )`
	declWideLabels     = `re . compile ( "(?:run-(?:ci|on)-[A-Za-z0-9][A-Za-z0-9_.-]*|bypass-fastfail)" )`
	declTestFile       = `re . compile ( "tests/(?:e2e|fast|fast-gpu|ci)(?:/[A-Za-z0-9_][A-Za-z0-9_.-]*)*/test_[A-Za-z0-9_][A-Za-z0-9_.-]*\\.py" )`
	declRunFileCommand = `re . compile ( rf"/{RUN_FILE_COMMAND} +({TEST_FILE_PATTERN.pattern})" )`
	declPins           = `( ( "ci_image_tag" , re . compile ( "^ci-image-tag:\\s+(\\S+)" , re . MULTILINE ) , re . compile ( "[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}" ) , ) , ( "ci_megatron_pr" , re . compile ( "^ci-megatron-pr:\\s+(\\S+)" , re . MULTILINE ) , re . compile ( "#[0-9]+|[A-Za-z0-9_][A-Za-z0-9_./-]*" ) , ) , ( "ci_sglang_pr" , re . compile ( "^ci-sglang-pr:\\s+(\\S+)" , re . MULTILINE ) , re . compile ( "#[0-9]+|[A-Za-z0-9_][A-Za-z0-9_./-]*" ) , ) , )`
	declRunURL         = `re . compile ( rf"https://github\.com/{re.escape(REPOSITORY)}/actions/runs/[1-9][0-9]*" )`
	declMarkers4       = `( "/run-ci-" , "/bypass-fastfail" , "/clear-labels" , "/rerun-failed-ci" )`
	declMarkers5       = `( "/run-ci" , "/rerun-test" , "/bypass-fastfail" , "/clear-labels" , "/rerun-failed-ci" )`
)

var sharedDecls = map[string]string{
	"CLEAR_COMMAND":      `"clear-labels"`,
	"RERUN_COMMAND":      `"rerun-failed-ci"`,
	"CLEAR_EXACT_LABELS": `frozenset ( { "nightly" , "bypass-fastfail" } )`,
	"RERUN_WORKFLOWS":    `( ( "pre-commit.yml" , ".github/workflows/pre-commit.yml" ) , ( "pr-test.yml" , ".github/workflows/pr-test.yml" ) , ( "pr-test-rocm.yml" , ".github/workflows/pr-test-rocm.yml" ) , )`,
	"COMMAND_PATTERN":    declCommandPattern,
	"SHA_PATTERN":        `re . compile ( "[0-9a-f]{40}" )`,
	"POLICY_PERMISSIONS": `frozenset ( { "write" , "admin" } )`,
	"POLICY_GROUPS":      `frozenset ( { "add_label_access" , "repo_write_access" } )`,
}

var runFileDecls = map[string]string{
	"RUN_FILE_COMMAND":         `"rerun-test"`,
	"RUN_FILE_WORKFLOW":        `"run-ci-file.yml"`,
	"RUN_FILE_WORKFLOW_REF":    `"main"`,
	"TEST_FILE_PATTERN":        declTestFile,
	"RUN_FILE_COMMAND_PATTERN": declRunFileCommand,
	"PR_BODY_PINS":             declPins,
}

// declared is a form's declarations: the shared ones and more.
func declared(more ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range append([]map[string]string{sharedDecls}, more...) {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

const (
	notExactLabels  = "comment must contain one exact /<label>, /clear-labels, or /rerun-failed-ci command"
	notExactRunFile = "comment must contain one exact /<label>, /rerun-test <test-file>, /clear-labels, or /rerun-failed-ci command"
)

var markers4 = []string{"/run-ci-", "/bypass-fastfail", "/clear-labels", "/rerun-failed-ci"}
var markers5 = []string{"/run-ci", "/rerun-test", "/bypass-fastfail", "/clear-labels", "/rerun-failed-ci"}

// Forms are the gateway's forms, the newest first: a checkout without the
// script takes the first (as every rule of miles-ci keeps the 31f1ca9 form
// where the checkout declares none).
var Forms = []Form{
	{Name: "run-details", Miles: "819ba9650 (#2676) and 31f1ca9: /rerun-test answers with its run's link, acknowledge and reply modes",
		Markers: markers5, NotExact: notExactRunFile, LabelPattern: labelsNarrow, RunFile: true, RunDetails: true,
		declares: declared(runFileDecls, map[string]string{"COMMAND_MARKERS": declMarkers5, "LABEL_PATTERN": declNarrowLabels, "WORKFLOW_RUN_URL_PATTERN": declRunURL})},
	{Name: "run-on-labels", Miles: "107731c3c and f030484dd (the GPU-generation line): the policy may expose run-on-<arch> labels",
		Markers: markers5, NotExact: notExactRunFile, LabelPattern: labelsWide, RunFile: true,
		declares: declared(runFileDecls, map[string]string{"COMMAND_MARKERS": declMarkers5, "LABEL_PATTERN": declWideLabels})},
	{Name: "rerun-test", Miles: "05c94552e (#2652): /rerun-test dispatches run-ci-file.yml (204, no details)",
		Markers: markers5, NotExact: notExactRunFile, LabelPattern: labelsNarrow, RunFile: true,
		declares: declared(runFileDecls, map[string]string{"COMMAND_MARKERS": declMarkers5, "LABEL_PATTERN": declNarrowLabels})},
	{Name: "labels", Miles: "98b285ed2 (#2496): labels, /clear-labels and /rerun-failed-ci",
		Markers: markers4, NotExact: notExactLabels, LabelPattern: labelsNarrow,
		declares: declared(map[string]string{"COMMAND_MARKERS": declMarkers4, "LABEL_PATTERN": declNarrowLabels})},
}

// The label shapes of LABEL_PATTERN, as Go expressions of a full match.
const (
	labelsNarrow = `(?:run-ci-[A-Za-z0-9][A-Za-z0-9_.-]*|bypass-fastfail)`
	labelsWide   = `(?:run-(?:ci|on)-[A-Za-z0-9][A-Za-z0-9_.-]*|bypass-fastfail)`
)

// watched are the names whose declaration picks the form.
func watched() []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range Forms {
		for k := range f.declares {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Default repository of a checkout without the script (Miles').
const (
	DefaultRepository   = "radixark/miles"
	DefaultRepositoryID = 1072725553
)

// Gateway is the gateway of one checkout: its form and the repository its
// script serves (REPOSITORY, REPOSITORY_ID).
type Gateway struct {
	Form
	Repository   string
	RepositoryID *big.Int
	// FromScript says the checkout's script chose the form (false: the
	// checkout has none and the newest form applies).
	FromScript bool
}

// Default is the gateway of a checkout without the script.
func Default() Gateway {
	return Gateway{Form: Forms[0], Repository: DefaultRepository, RepositoryID: big.NewInt(DefaultRepositoryID)}
}

// MaxScriptSize bounds the script read to pick the form (it is 40 KiB).
const MaxScriptSize = 1 << 20

// Detect is the gateway the checkout's script declares (ScriptFile's
// source): the form whose declarations all read the same there, and its
// REPOSITORY and REPOSITORY_ID. A script no form matches is a form
// miles-ci does not know: the error names what differs from the nearest.
func Detect(src []byte) (Gateway, error) {
	if len(src) > MaxScriptSize {
		return Gateway{}, fmt.Errorf("%s is %d bytes, more than the %d a gateway script holds", ScriptFile, len(src), MaxScriptSize)
	}
	decls, err := readDecls(pysource.Normalize(string(src)))
	if err != nil {
		return Gateway{}, fmt.Errorf("%s: %w; it must be Miles' comment gateway script", ScriptFile, err)
	}
	g := Gateway{FromScript: true}
	repo, ok := decls["REPOSITORY"]
	if s, err := strconv.Unquote(repo); ok && err == nil && strings.Count(s, "/") == 1 {
		g.Repository = s
	}
	if id, ok := new(big.Int).SetString(decls["REPOSITORY_ID"], 10); ok && id.Sign() > 0 {
		g.RepositoryID = id
	}
	if g.Repository == "" || g.RepositoryID == nil {
		return Gateway{}, fmt.Errorf("%s declares no REPOSITORY = \"owner/name\" and REPOSITORY_ID = <id>; miles-ci reads the repository the gateway serves from them", ScriptFile)
	}
	best, bestDiff := -1, []string(nil)
	for i, f := range Forms {
		var diff []string
		for _, name := range watched() {
			if decls[name] != f.declares[name] {
				diff = append(diff, name)
			}
		}
		if len(diff) == 0 {
			g.Form = f
			return g, nil
		}
		if best < 0 || len(diff) < len(bestDiff) {
			best, bestDiff = i, diff
		}
	}
	return Gateway{}, fmt.Errorf("%s takes a form of the comment gateway miles-ci does not know: %s differ from its nearest form %q (%s); update miles-ci, or run the checkout's own script",
		ScriptFile, strings.Join(bestDiff, ", "), Forms[best].Name, Forms[best].Miles)
}

// readDecls reads the script's top-level `NAME = value` statements, each
// value as declText: its tokens joined by spaces, a plain string literal
// as its value quoted (so r"..." and "..." read the same), other tokens as
// written.
func readDecls(src string) (map[string]string, error) {
	out := map[string]string{}
	err := pysource.ScanTopLevel(src, func(toks []pysource.Token) {
		var body []pysource.Token
		for _, t := range toks {
			if t.Kind != pysource.Newline && t.Kind != pysource.EOF {
				body = append(body, t)
			}
		}
		if len(body) < 3 || body[0].Kind != pysource.Name || body[1].Text != "=" {
			return
		}
		parts := make([]string, 0, len(body)-2)
		for _, t := range body[2:] {
			parts = append(parts, tokenText(t))
		}
		out[body[0].Text] = strings.Join(parts, " ")
	})
	return out, err
}

func tokenText(t pysource.Token) string {
	if t.Kind != pysource.String {
		return t.Text
	}
	lit, err := pysource.DecodeString(t.Text)
	if err != nil || lit.FString || lit.Bytes {
		return t.Text
	}
	return strconv.Quote(lit.Value)
}
