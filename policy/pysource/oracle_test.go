package pysource

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"
)

// oracleValue mirrors ast_oracle.py's description of an argument value.
type oracleValue struct {
	Node     string        `json:"node"`
	Type     string        `json:"type,omitempty"`
	Num      string        `json:"num,omitempty"`
	Bool     *bool         `json:"bool,omitempty"`
	Str      *string       `json:"str,omitempty"`
	Overflow bool          `json:"overflow,omitempty"`
	Elems    []oracleValue `json:"elems,omitempty"`
}

type oracleArg struct {
	Kind    string       `json:"kind"`
	Keyword string       `json:"keyword,omitempty"`
	Value   *oracleValue `json:"value,omitempty"`
}

type oracleCall struct {
	Func string      `json:"func"`
	Line int         `json:"line"`
	Args []oracleArg `json:"args"`
}

type oracleResult struct {
	File  string       `json:"file"`
	Error bool         `json:"error"`
	Msg   string       `json:"msg"`
	Line  int          `json:"line"`
	Calls []oracleCall `json:"calls"`
}

func describe(e Expr) *oracleValue {
	v := &oracleValue{Node: e.Node}
	if e.Node == "List" {
		v.Elems = []oracleValue{}
		for _, el := range e.Elems {
			v.Elems = append(v.Elems, *describe(el))
		}
	}
	if c := e.Const; c != nil {
		v.Type = c.Type
		switch c.Type {
		case "bool":
			b := c.Bool
			v.Bool = &b
		case "int", "float":
			if c.Overflow {
				v.Overflow = true
			} else {
				v.Num = FloatRepr(c.Num)
			}
		case "str", "bytes":
			s := c.Str
			v.Str = &s
		}
	}
	return v
}

// goView renders what TopLevelCalls finds in the oracle's shape: positional
// and starred arguments first, then keywords, as Python's ast keeps them.
func goView(calls []Call) []oracleCall {
	out := []oracleCall{}
	for _, c := range calls {
		oc := oracleCall{Func: c.Func, Line: c.Line, Args: []oracleArg{}}
		var kws []oracleArg
		for _, a := range c.Args {
			switch a.Kind {
			case Positional:
				oc.Args = append(oc.Args, oracleArg{Kind: "positional", Value: describe(a.Value)})
			case Starred:
				oc.Args = append(oc.Args, oracleArg{Kind: "starred"})
			case Keyword:
				kws = append(kws, oracleArg{Kind: "keyword", Keyword: a.Keyword, Value: describe(a.Value)})
			case DoubleStar:
				kws = append(kws, oracleArg{Kind: "doublestar"})
			}
		}
		oc.Args = append(oc.Args, kws...)
		out = append(out, oc)
	}
	return out
}

// runOracle asks CPython's ast module about each file.
func runOracle(t *testing.T, files []string) map[string]oracleResult {
	t.Helper()
	py := findPython(t)
	cmd := exec.Command(py, filepath.Join("testdata", "ast_oracle.py"), "-")
	cmd.Stdin = strings.NewReader(strings.Join(files, "\n"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ast_oracle.py failed: %v\n%s", err, stderr.String())
	}
	res := map[string]oracleResult{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r oracleResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("oracle output %q: %v", sc.Text(), err)
		}
		res[r.File] = r
	}
	return res
}

// findPython prefers the system interpreter: version-manager shims can take
// seconds to start.
func findPython(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed; the differential test against CPython's ast needs it")
	}
	return py
}

func isRegister(name string) bool { return strings.HasPrefix(name, "register_") }

// compareWithOracle checks that TopLevelCalls agrees with CPython's ast on
// every file: the same calls, lines and argument values where Python parses
// the file, an error where it does not, and for every file named syntax_*
// CPython's own message and line.
func compareWithOracle(t *testing.T, files []string) {
	oracle := runOracle(t, files)
	for _, f := range files {
		want, ok := oracle[f]
		if !ok {
			t.Errorf("%s: no oracle answer", f)
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		calls, err := TopLevelCalls(string(src), isRegister)
		if want.Error {
			if err == nil {
				t.Errorf("%s: wanted a syntax error (Python refuses the file: line %d: %s), got none", f, want.Line, want.Msg)
				continue
			}
			if se, ok := err.(*SyntaxError); strings.HasPrefix(filepath.Base(f), "syntax_") && want.Line > 0 &&
				(!ok || se.Msg != want.Msg || se.Line != want.Line) {
				t.Errorf("%s: wanted CPython's %q, got %q", f, fmt.Sprintf("line %d: %s", want.Line, want.Msg), err.Error())
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: Python parses the file, got error %v", f, err)
			continue
		}
		got := goView(calls)
		if want.Calls == nil {
			want.Calls = []oracleCall{}
		}
		for i := range want.Calls {
			if want.Calls[i].Args == nil {
				want.Calls[i].Args = []oracleArg{}
			}
		}
		if !reflect.DeepEqual(got, want.Calls) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want.Calls)
			t.Errorf("%s:\nwanted %s\ngot    %s", f, w, g)
		}
	}
}

func TestTopLevelCallsMatchesCPython(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.py"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files: %v", err)
	}
	sort.Strings(files)
	compareWithOracle(t, files)
}

// TestGeneratedSourcesMatchCPython splices registration calls into many
// generated contexts (strings, blocks, brackets, continuations) and checks
// the parser against CPython on each.
func TestGeneratedSourcesMatchCPython(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i, src := range generatedSources() {
		p := filepath.Join(dir, fmt.Sprintf("gen_%04d.py", i))
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	compareWithOracle(t, files)
}

// generatedSources combines statement shapes pairwise, so each shape is seen
// before and after every other.
func generatedSources() []string {
	call := `register_cuda_ci(est_time=60, suite="stage-c-2-gpu-h200", labels=["megatron"])`
	shapes := []string{
		call,
		"x = 1; " + call,
		call + "; y = 2",
		"if x:\n    " + call + "\nelse:\n    pass",
		"def f(a=\"\"\"\n" + call + "\n\"\"\"):\n    return a",
		"s = '" + strings.ReplaceAll(call, "\"", "\\\"") + "'",
		"t = (\n  1,\n  2) ; " + call,
		"# " + call,
		"class A:\n\tx = 1\n\n\n" + call,
		"u = r'\\'' ; " + call + " # ' \"",
		"v = b'\\x00' \\\n  b'1'\n" + call,
		"w = [\n" + call + ",\n]",
		"@dec\nclass B: pass",
		"(" + call + ")",
		"z = f'{1}' f\"{2}\"; " + call,
		"if a: b()\nelif c: " + call,
		"try: pass\nexcept E: pass",
		"lambda: " + call,
		"x = {'a': 1,\n     'b': [2, (3,\n 4)]}",
		call + " \\\n",
	}
	var out []string
	for _, a := range shapes {
		for _, b := range shapes {
			out = append(out, a+"\n"+b+"\n")
		}
	}
	return out
}

// mutationSnippets are what TestMutatedSourcesMatchCPython inserts or puts in
// place of a piece of source: brackets, operators, keywords, literals,
// newlines and indentation.
var mutationSnippets = []string{"(", ")", "[", "]", "{", "}", ",", ":", ";", ".", "=", "==", ":=", "*", "**", "+", "-",
	"/", "@", "->", "|", "not", "in", "is", "and", "or", "if", "else", "for", "lambda", "yield", "await", "async", "def",
	"class", "return", "del", "import", "from", "as", "with", "try", "except", "finally", "raise", "pass", "match", "case",
	"_", "x", "1", "1.5", "1j", "0x", "1_", "'s'", "f'{x}'", "f'{", "b'b'", "...", "None", "\n", "\n    ", "\t", "\\\n", "#", "!", "$"}

// TestMutatedSourcesMatchCPython changes the corpus and the generated
// sources at random places (a fixed seed, so every run tries the same
// sources) and checks that the reader refuses exactly what CPython refuses,
// and reads the same calls from what it accepts.
func TestMutatedSourcesMatchCPython(t *testing.T) {
	corpus, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.py"))
	if err != nil || len(corpus) == 0 {
		t.Fatalf("no corpus files: %v", err)
	}
	var seeds []string
	for _, f := range corpus {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(src) < 4000 {
			seeds = append(seeds, string(src))
		}
	}
	seeds = append(seeds, generatedSources()...)
	rng := rand.New(rand.NewPCG(7, 11))
	dir := t.TempDir()
	var files []string
	for i := 0; i < 2000; i++ {
		src := seeds[rng.IntN(len(seeds))]
		for k := 1 + rng.IntN(2); k > 0 && len(src) > 0; k-- {
			src = mutate(rng, src)
		}
		p := filepath.Join(dir, fmt.Sprintf("mut_%04d.py", i))
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	compareWithOracle(t, files)
}

// mutate deletes, repeats or replaces a short piece of src, or inserts a
// snippet, at a random character boundary.
func mutate(rng *rand.Rand, src string) string {
	at := func() int {
		i := rng.IntN(len(src) + 1)
		for i < len(src) && !utf8.RuneStart(src[i]) {
			i++
		}
		return i
	}
	i := at()
	j := min(len(src), i+1+rng.IntN(4))
	for j < len(src) && !utf8.RuneStart(src[j]) {
		j++
	}
	snippet := mutationSnippets[rng.IntN(len(mutationSnippets))]
	switch rng.IntN(4) {
	case 0:
		return src[:i] + src[j:]
	case 1:
		return src[:j] + src[i:j] + src[j:]
	case 2:
		return src[:i] + snippet + src[j:]
	}
	return src[:i] + snippet + " " + src[i:]
}

// TestLibraryMatchesCPython compares the reader with CPython on every .py
// file below $MILES_CI_PYTHON_CORPUS, e.g. CPython's own Lib/ (11,659 files
// for 3.11.7, test suite included): the check behind docs/python.md. It is
// skipped when the variable is not set.
func TestLibraryMatchesCPython(t *testing.T) {
	root := os.Getenv("MILES_CI_PYTHON_CORPUS")
	if root == "" {
		t.Skip("set MILES_CI_PYTHON_CORPUS to a folder of Python files, e.g. the lib/python3.11 folder of a CPython 3.11 install")
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".py") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	compareWithOracle(t, files)
	t.Logf("%d files compared", len(files))
}
