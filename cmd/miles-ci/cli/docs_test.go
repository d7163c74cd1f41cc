package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/radixark/miles-ci/github/githubtest"
)

// TestDocExamples keeps the examples of README.md and docs/*.md honest: it
// runs, in-process and from the repository root, every miles-ci command whose
// output a page shows and compares that output with the page's, line for line.
//
// Two forms are read:
//   - a ```sh block of commands followed (only blank lines between) by a plain
//     ``` block: the output of the block's last miles-ci command;
//   - a ``` or ```console block of "$ miles-ci ..." lines, each followed by its
//     output up to the next "$ " line.
//
// In the shown output a line "..." stands for any number of lines, "# exit N"
// is the exit status (else 0), and "# appends: k=v" or "# appends:" followed
// by "# k=v" lines is what the command appends to $GITHUB_OUTPUT (a fresh
// file per command). stdout and stderr are compared as a terminal shows them,
// interleaved; ::notice:: lines are left out unless the page shows one. The
// GitHub API stand-in of the pages (go run ./github/githubtest/standin) is
// githubtest.Start on testdata/github.
//
// A command that cannot run here must have a skip reason (skipReason); any
// other command without shown output fails the test, so a new example is
// either checked or listed as skipped.
func TestDocExamples(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{filepath.Join(root, "README.md")}, pages...)
	// A what-if reads the default runtime history where one exists: the
	// pages' predictions are of a machine with none (est_time alone).
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	api := githubtest.Start(filepath.Join(root, "testdata", "github"))
	defer api.Close()
	t.Chdir(root)

	checked, prevCode := 0, 0
	var skipped []string
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, page)
		for _, ex := range docExamples(rel, string(text)) {
			if why := skipReason(ex.command); why != "" {
				skipped = append(skipped, fmt.Sprintf("%s:%d: %s: %s", ex.page, ex.line, ex.command, why))
				continue
			}
			t.Run(fmt.Sprintf("%s:%d", ex.page, ex.line), func(t *testing.T) {
				prevCode = checkExample(t, ex, api.URL, prevCode)
			})
			checked++
		}
	}
	if checked < 40 {
		t.Errorf("wanted at least 40 checked examples, got %d: is the parser still reading the pages?", checked)
	}
	t.Logf("checked %d examples; skipped %d:\n%s", checked, len(skipped), strings.Join(skipped, "\n"))
}

// docExample is one command of a page and the output the page shows for it.
type docExample struct {
	page    string
	line    int    // 1-based line of the command
	command string // the command line, continuations joined
	shown   []string
	hasOut  bool // the page shows an output (else only a skipped command may stand alone)
	echoed  bool // the next command is "echo $?", which shows the exit status
}

// fence is one fenced code block of a page.
type fence struct {
	info  string
	line  int // 1-based line of the first content line
	lines []string
	after int // 1-based line of the closing fence
}

var fenceOpen = regexp.MustCompile("^( *)(`{3,})([^`]*)$")

// fences reads the fenced code blocks of a Markdown page (CommonMark's rules
// for backtick fences, indented ones in list items included).
func fences(text string) []fence {
	lines := strings.Split(text, "\n")
	var out []fence
	for i := 0; i < len(lines); i++ {
		m := fenceOpen.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent, ticks := len(m[1]), m[2]
		f := fence{info: strings.TrimSpace(m[3]), line: i + 2}
		for i++; i < len(lines); i++ {
			l := lines[i]
			if t := strings.TrimLeft(l, " "); strings.HasPrefix(t, ticks) && strings.Trim(t, "` ") == "" {
				break
			}
			n := len(l) - len(strings.TrimLeft(l, " "))
			f.lines = append(f.lines, l[min(n, indent):])
		}
		f.after = i + 1
		out = append(out, f)
	}
	return out
}

// docExamples lists the commands of a page with their shown output.
func docExamples(page, text string) []docExample {
	fs := fences(text)
	lines := strings.Split(text, "\n")
	var out []docExample
	for k, f := range fs {
		switch {
		case f.info == "sh":
			var cmds []docExample
			for i := 0; i < len(f.lines); i++ {
				start := i
				cmd := f.lines[i]
				for strings.HasSuffix(cmd, "\\") && i+1 < len(f.lines) {
					i++
					cmd = strings.TrimSuffix(cmd, "\\") + " " + strings.TrimSpace(f.lines[i])
				}
				if strings.TrimSpace(cmd) != "" {
					cmds = append(cmds, docExample{page: page, line: f.line + start, command: strings.TrimSpace(cmd)})
				}
			}
			// The output block, if the next block follows with only blank lines between.
			if k+1 < len(fs) && fs[k+1].info == "" && onlyBlank(lines[f.after:fs[k+1].line-2]) {
				for j := len(cmds) - 1; j >= 0; j-- {
					if isMilesCI(cmds[j].command) {
						cmds[j].shown, cmds[j].hasOut = fs[k+1].lines, true
						break
					}
				}
			}
			out = append(out, cmds...)
		case f.info == "" || f.info == "console":
			var cur *docExample
			var session []docExample
			for i := 0; i < len(f.lines); i++ {
				l := f.lines[i]
				if cmd, ok := strings.CutPrefix(l, "$ "); ok {
					start := i
					for strings.HasSuffix(cmd, "\\") && i+1 < len(f.lines) {
						i++
						cmd = strings.TrimSuffix(cmd, "\\") + " " + strings.TrimSpace(f.lines[i])
					}
					session = append(session, docExample{page: page, line: f.line + start, command: strings.TrimSpace(cmd), hasOut: true})
					cur = &session[len(session)-1]
					continue
				}
				if cur != nil {
					cur.shown = append(cur.shown, l)
				}
			}
			for j := range session {
				if j+1 < len(session) && session[j+1].command == "echo $?" {
					session[j].echoed = true
				}
				// A console block's trailing blank line separates sessions; it is no output.
				for len(session[j].shown) > 0 && session[j].shown[len(session[j].shown)-1] == "" && j < len(session)-1 {
					session[j].shown = session[j].shown[:len(session[j].shown)-1]
				}
			}
			out = append(out, session...)
		}
	}
	return out
}

func onlyBlank(lines []string) bool {
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			return false
		}
	}
	return true
}

// milesArgs returns the miles-ci arguments of a command line, and whether it
// is a miles-ci command at all.
func milesArgs(command string) ([]string, bool) {
	words := shellWords(command)
	words = words[len(commandEnv(words)):]
	switch {
	case len(words) >= 1 && words[0] == "miles-ci":
		return words[1:], true
	case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/miles-ci":
		return words[3:], true
	}
	return nil, false
}

// commandEnv is the leading NAME=VALUE words of a command (the environment
// sh gives it), in order.
func commandEnv(words []string) []string {
	n := 0
	for n < len(words) && envWord.MatchString(words[n]) {
		n++
	}
	return words[:n]
}

var envWord = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)

func isMilesCI(command string) bool {
	_, ok := milesArgs(command)
	return ok
}

// skipReason says why a command of the pages is not run here ("" = it is).
func skipReason(command string) string {
	words := shellWords(command)
	if len(words) == 0 {
		return "empty"
	}
	args, ok := milesArgs(command)
	switch {
	case ok && slices.Contains(args, "-h"):
		return ""
	case ok && (args[0] == "run" || args[0] == "file-run" || args[0] == "ci") && !slices.Contains(args, "--dry-run") && !slices.Contains(args, "--what-if"):
		return "runs tests on a Dagger engine (hack/e2e.sh runs it)"
	case ok && args[0] == "report" && slices.Contains(args, "ci-results"):
		return "reads the results folder of the guide's ci run (hack/e2e/guide.sh runs the guide's steps in order)"
	case ok && args[0] == "triage":
		return "runs tests on a Dagger engine at the head and the merge base (hack/e2e/rerun.sh runs it; TestTriage on a stand-in engine)"
	case ok && slices.Contains(args, "../miles"):
		return "needs a Miles checkout at ../miles"
	case ok && args[0] == "patch-check":
		return "needs the Megatron-LM git checkout the page describes; TestPatchCheckCommand runs the same cases"
	case ok && args[0] == "workflows":
		return "writes examples/workflows; TestExamplesAreUpToDate checks what it writes"
	case ok && args[0] == "gate" && slices.Contains(args, "~/miles"):
		return "needs the page's Miles checkout and store; TestGateCommand runs the same flow on testdata/miles-gate"
	case ok && (args[0] == "est-time" || args[0] == "history"):
		return "needs the page's runtime history database; TestEstTimeCommand and TestRunRecords run these commands on fixtures"
	case ok && slices.Contains(args, "--repo") && args[slices.Index(args, "--repo")+1] == ".":
		return "needs the broken checkout the page describes; TestRegistryErrorAnnotatesTheFile runs it"
	case ok:
		return ""
	case words[0] == "dagger":
		return "a Dagger module call: needs a Dagger engine (hack/e2e.sh runs the module)"
	case strings.HasPrefix(words[0], "MILES_CI_GITHUB_STANDIN="):
		return "hack/run.sh with the GitHub API stand-in in its namespace: hack/e2e/trust.sh runs it"
	case words[0] == "sudo" || words[0] == "bash" || words[0] == "docker":
		return "a script or engine setup that needs root or a Dagger engine"
	case words[0] == "go" && len(words) > 2 && words[2] == "./github/githubtest/standin",
		words[0] == "export" && strings.HasPrefix(words[1], "GITHUB_API_URL="):
		return "the GitHub API stand-in: the test serves testdata/github itself"
	case words[0] == "export":
		return "engine setup"
	case strings.HasPrefix(words[0], "MILES_CI_PYTHON_CORPUS="):
		return "a go test run over a Python corpus outside the repository"
	case words[0] == "echo" && len(words) == 2 && words[1] == "$?":
		return ""
	}
	return "" // anything else fails in checkExample, so it gets a reason here
}

// shellWords splits a command line as sh would, for the forms the pages use:
// blanks, '...', "...", backslash escapes, # comments and a trailing &.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case quote == '"':
			if c == '"' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			in = true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case c == '#' && !in:
			i = len(line)
		case c == '&' && !in:
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// shownOutput splits the page's output into the lines to compare, the exit
// status and the lines appended to $GITHUB_OUTPUT (nil: not shown).
func shownOutput(shown []string) (lines []string, code int, appends []string) {
	inAppends := false
	for _, l := range shown {
		c, ok := strings.CutPrefix(l, "# ")
		if !ok {
			inAppends = false
			lines = append(lines, l)
			continue
		}
		switch {
		case strings.HasPrefix(c, "exit "):
			code, _ = strconv.Atoi(strings.TrimPrefix(c, "exit "))
			inAppends = false
		case strings.HasPrefix(c, "appends"):
			inAppends = true
			appends = []string{}
			if _, kv, _ := strings.Cut(c, ": "); kv != "" {
				appends = append(appends, kv)
			}
		case inAppends:
			appends = append(appends, c)
		}
	}
	return lines, code, appends
}

// checkExample runs one example and returns its exit status; prevCode is the
// status of the example before it, for "$ echo $?".
func checkExample(t *testing.T, ex docExample, apiURL string, prevCode int) int {
	words := shellWords(ex.command)
	wantLines, wantCode, wantAppends := shownOutput(ex.shown)
	if len(words) == 2 && words[0] == "echo" && words[1] == "$?" {
		if want, got := strings.Join(wantLines, "\n"), strconv.Itoa(prevCode); want != got {
			t.Errorf("%s: wanted %q, got %q", ex.command, want, got)
		}
		return prevCode
	}
	args, ok := milesArgs(ex.command)
	if !ok || !ex.hasOut {
		t.Fatalf("%s: a command the test neither runs nor skips; show its output or give skipReason a reason", ex.command)
	}
	out := filepath.Join(t.TempDir(), "github_output")
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "$GITHUB_OUTPUT", out)
	}
	vars := map[string]string{"GITHUB_API_URL": apiURL, "GITHUB_OUTPUT": out}
	for _, w := range commandEnv(words) {
		name, value, _ := strings.Cut(w, "=")
		vars[name] = value
	}
	var both bytes.Buffer
	code := Run(args, Env{Stdout: &both, Stderr: &both, Getenv: func(k string) string { return vars[k] }})
	got := strings.Split(both.String(), "\n")
	if !slices.ContainsFunc(wantLines, func(l string) bool { return strings.HasPrefix(l, "::notice::") }) {
		got = slices.DeleteFunc(got, func(l string) bool { return strings.HasPrefix(l, "::notice::") })
	}
	want := wantLines
	if len(want) == 0 || want[len(want)-1] != "..." {
		want = append(slices.Clip(want), "") // the output ends with a newline
	}
	if code != wantCode && !ex.echoed {
		t.Errorf("%s: wanted exit %d, got %d\n%s", ex.command, wantCode, code, both.String())
	}
	if !matchLines(want, got) {
		t.Errorf("%s (%s:%d): wanted the page's output\n%s\ngot\n%s", ex.command, ex.page, ex.line, strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
	if wantAppends != nil {
		data, _ := os.ReadFile(out)
		if got := strings.TrimSuffix(string(data), "\n"); got != strings.Join(wantAppends, "\n") {
			t.Errorf("%s: wanted $GITHUB_OUTPUT %q, got %q", ex.command, strings.Join(wantAppends, "\n"), got)
		}
	}
	return code
}

// matchLines matches got against want, where a want line "..." stands for
// any number of lines.
func matchLines(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "..." {
		for i := 0; i <= len(got); i++ {
			if matchLines(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && want[0] == got[0] && matchLines(want[1:], got[1:])
}
