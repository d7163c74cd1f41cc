package pysource

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
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
	cmd := exec.Command(py, append([]string{filepath.Join("testdata", "ast_oracle.py")}, files...)...)
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
// the file, and an error for every file named syntax_*.
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
			if strings.HasPrefix(filepath.Base(f), "syntax_") && err == nil {
				t.Errorf("%s: wanted a syntax error (Python refuses the file), got none", f)
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
