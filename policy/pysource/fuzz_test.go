package pysource

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzTopLevelCalls feeds arbitrary source to the reader: it must never
// panic or hang, and every error must be a *SyntaxError with a line.
func FuzzTopLevelCalls(f *testing.F) {
	corpus, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*.py"))
	for _, p := range corpus {
		if src, err := os.ReadFile(p); err == nil {
			f.Add(string(src))
		}
	}
	deep := func(open, mid, close string) string {
		return strings.Repeat(open, 199) + mid + strings.Repeat(close, 199)
	}
	for _, s := range []string{"f'{x!r:{y}}'", "match x:\n case {**r}: pass\n", "(" + "-" + "(" + "x))", "\\\n", "\ufeff", "if x:\n\tpass\n        pass\n",
		deep("(", "x", ")"), deep("f(", "x=", ")"), deep("{", "x:", "}"), "for " + deep("(", "x", ")") + " y: pass",
		strings.Repeat("-", 4000) + "x", strings.Repeat("x if y else ", 3000) + "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		calls, err := TopLevelCalls(src, isRegister)
		if ref, refErr := referenceCalls(src); !reflect.DeepEqual(calls, ref) || !reflect.DeepEqual(err, refErr) {
			t.Fatalf("TopLevelCalls = %+v, %v; every statement through callStatement gives %+v, %v", calls, err, ref, refErr)
		}
		if err != nil {
			se, ok := err.(*SyntaxError)
			if !ok || se.Line < 1 || se.Msg == "" {
				t.Fatalf("wanted a *SyntaxError with a line and a message, got %#v", err)
			}
			return
		}
		for _, c := range calls {
			if c.Line < 1 {
				t.Fatalf("call %s without a line", c.Func)
			}
		}
	})
}

// referenceCalls is TopLevelCalls without its shortcuts: every top-level
// statement is handed to callStatement.
func referenceCalls(src string) ([]Call, error) {
	var calls []Call
	err := topLevelStatements(src, func(stmt []Token) error {
		c, ok, err := callStatement(stmt, isRegister)
		if ok {
			calls = append(calls, c)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return calls, nil
}
