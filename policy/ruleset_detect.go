package policy

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/radixark/miles-ci/policy/pysource"
)

// registryFault is the kind of a registry error whose test the checkout's
// own code may accept in a registration form miles-ci does not cover.
type registryFault int

const (
	faultOther registryFault = iota
	// faultUnknownKeyword: a keyword outside miles-ci's set (RegistryError.arg).
	faultUnknownKeyword
	// faultPositional: more positional arguments than est_time and suite.
	faultPositional
	// faultNoLabels: a CUDA or ROCm registration without labels.
	faultNoLabels
)

// markerSig is the signature of one register_*_ci marker function as a
// checkout's tests/ci/ci_register.py defines it.
type markerSig struct {
	line int
	// positional are the parameters that may be passed by position, in order.
	positional []string
	// params maps every named parameter to whether it has a default.
	params map[string]bool
	// varKeyword is set by **kwargs.
	varKeyword bool
}

// registerForm is what a checkout's tests/ci/ci_register.py declares of its
// registration calls: the marker functions' signatures and _VALID_KWARGS.
type registerForm struct {
	funcs map[string]markerSig
	// validKwargs is _VALID_KWARGS and the line of its assignment (0: none).
	validKwargs []string
	validLine   int
}

// readRegisterForm reads the checkout's declaration of its registration
// calls; nil when the file is absent, unreadable or declares none (then
// miles-ci's own form applies).
func readRegisterForm(root string) *registerForm {
	data, err := readTableFile(root, CIRegisterFile)
	if err != nil || data == nil {
		return nil
	}
	src := pysource.Normalize(string(data))
	form := &registerForm{funcs: map[string]markerSig{}}
	scanErr := pysource.ScanTopLevel(src, func(toks []pysource.Token) {
		if len(toks) < 4 || toks[0].Text != "def" || toks[2].Text != "(" {
			return
		}
		if _, ok := registerFuncs[toks[1].Text]; ok {
			form.funcs[toks[1].Text] = parseSignature(toks[3:], toks[0].Line)
		}
	})
	if scanErr != nil {
		return nil
	}
	if as, err := pysource.Assignments(src); err == nil {
		for _, a := range as {
			if a.Name != "_VALID_KWARGS" || a.ValueErr != nil {
				continue
			}
			v := a.Value
			if v.Kind == pysource.CallValue && len(v.Elems) == 1 {
				v = v.Elems[0]
			}
			var names []string
			for _, e := range v.Elems {
				if e.Kind == pysource.StrValue {
					names = append(names, e.Str)
				}
			}
			form.validKwargs, form.validLine = names, a.Line
		}
	}
	if len(form.funcs) == 0 {
		return nil
	}
	return form
}

// parseSignature reads the parameters of `def f(` up to its closing `)`.
func parseSignature(toks []pysource.Token, line int) markerSig {
	sig := markerSig{line: line, params: map[string]bool{}}
	keywordOnly := false
	var param []pysource.Token
	flush := func() {
		defer func() { param = param[:0] }()
		if len(param) == 0 {
			return
		}
		switch first := param[0].Text; {
		case first == "*" && len(param) == 1:
			keywordOnly = true
		case first == "*":
			keywordOnly = true // *args: what follows is keyword-only
		case first == "**":
			sig.varKeyword = true
		case first == "/":
		case param[0].Kind == pysource.Name:
			hasDefault := slices.ContainsFunc(param, func(t pysource.Token) bool { return t.Text == "=" })
			sig.params[first] = hasDefault
			if !keywordOnly {
				sig.positional = append(sig.positional, first)
			}
		}
	}
	depth := 0
	for _, t := range toks {
		if t.Kind == pysource.Op {
			switch t.Text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth == 0 {
					flush()
					return sig
				}
				depth--
			case ",":
				if depth == 0 {
					flush()
					continue
				}
			}
		}
		param = append(param, t)
	}
	flush()
	return sig
}

// declineForm turns a registry error into an *AheadError when the
// checkout's own tests/ci/ci_register.py declares that it accepts the
// registration (rules §0, §11.7): a keyword it lists, a positional argument
// its marker takes, or a GPU registration without labels where its marker
// gives labels a default (Miles before it required GPU labels, mid-August
// 2026). The test is not broken; miles-ci does not cover that form. Any
// other error is returned as it is.
func declineForm(root string, err error) error {
	var re *RegistryError
	if !errors.As(err, &re) || re.fault == faultOther {
		return err
	}
	form := readRegisterForm(root)
	if form == nil {
		return err
	}
	sig, ok := form.funcs[re.fn]
	if !ok {
		return err
	}
	where := fmt.Sprintf("%s:%d", CIRegisterFile, sig.line)
	ahead := &AheadError{File: re.File, Line: re.Line}
	switch re.fault {
	case faultUnknownKeyword:
		_, takes := sig.params[re.arg]
		listed := slices.Contains(form.validKwargs, re.arg)
		if !takes && !listed && !sig.varKeyword {
			return err // the checkout refuses it too: the test's own error
		}
		ahead.Construct = "'" + re.arg + "'"
		ahead.Detail = fmt.Sprintf("%s() of %s takes it", re.fn, where)
		if listed {
			ahead.Detail = fmt.Sprintf("a keyword accepted by %s:%d _VALID_KWARGS", CIRegisterFile, form.validLine)
		}
	case faultPositional:
		if len(sig.positional) <= len(positionalParams) {
			return err
		}
		ahead.Construct = fmt.Sprintf("%s() with the positional parameters %s", re.fn, pysource.ReprList(sig.positional))
		ahead.Detail = "an older registry form, " + where
	case faultNoLabels:
		hasDefault, takes := sig.params["labels"]
		if takes && !hasDefault {
			return err
		}
		ahead.Construct = re.fn + "() without labels"
		ahead.Detail = fmt.Sprintf("an older registry form: %s gives labels a default, so GPU tests need no domain label", where)
		if !takes {
			ahead.Detail = fmt.Sprintf("an older registry form: %s() of %s takes no labels", re.fn, where)
		}
	}
	return ahead
}

// olderDiscovery declines a checkout whose run_suite.py (its source, nil
// when absent) discovers the test files itself (Miles before 2026-05-28:
// tests/e2e/**/*.py, tests/fast and tests/utils, with unregistered files
// allowed) instead of calling ci_register's discover_ci_files over the roots
// of rules §2: it imports collect_tests but not discover_ci_files from
// tests.ci.ci_register. nil for every other checkout.
func olderDiscovery(data []byte) *AheadError {
	if data == nil {
		return nil
	}
	_, imports, err := pysource.Bindings(pysource.Normalize(string(data)))
	if err != nil {
		return nil
	}
	collect, discover := 0, false
	for _, im := range imports {
		if im.Module != "tests.ci.ci_register" {
			continue
		}
		switch im.Name {
		case "collect_tests":
			collect = im.Line
		case "discover_ci_files":
			discover = true
		}
	}
	if collect == 0 || discover {
		return nil
	}
	return &AheadError{File: RunSuiteFile, Line: collect,
		Construct: "test discovery of its own in " + RunSuiteFile,
		Detail:    "an older form: it imports collect_tests but not discover_ci_files from tests.ci.ci_register, so it finds other files than the discovery roots of rules §2"}
}

// PolicyStepFile is the module the resolve-ci-policy step runs.
const PolicyStepFile = "tests/ci/ci_policy.py"

// OlderPolicyStep declines the policy of a checkout whose resolve-ci-policy
// step (tests/ci/ci_policy.py with a main) is older than the one rules §3-§4
// describe (Miles before 2026-08-16): it reads no CADENCE_OVERRIDE (a called
// workflow's cadence) or writes no skipped_stages output, so its answers are
// not miles-ci's. nil for every other checkout, one without the file or
// whose ci_policy.py holds tables only included, and the built-in tables.
// LoadTables found it in the one read of the file.
func (t *Tables) OlderPolicyStep() error {
	if t == nil || t.olderPolicy == nil {
		return nil
	}
	return t.olderPolicy
}

// olderPolicyStep is OlderPolicyStep on the step's source (nil: absent).
func olderPolicyStep(data []byte) *AheadError {
	if data == nil {
		return nil
	}
	src := pysource.Normalize(string(data))
	mainLine := 0
	scanErr := pysource.ScanTopLevel(src, func(toks []pysource.Token) {
		if len(toks) > 1 && toks[0].Text == "def" && toks[1].Text == "main" {
			mainLine = toks[0].Line
		}
	})
	if scanErr != nil || mainLine == 0 {
		return nil
	}
	var missing []string
	for _, s := range []string{"CADENCE_OVERRIDE", "skipped_stages"} {
		if !strings.Contains(src, s) {
			missing = append(missing, s)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &AheadError{File: PolicyStepFile, Line: mainLine,
		Construct: "a resolve-ci-policy step without " + strings.Join(missing, " and "),
		Detail:    "an older form of " + PolicyStepFile + ", before the stage selection of rules §4 and the called workflow's cadence of rules §3"}
}
