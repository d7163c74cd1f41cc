package pysource

import "testing"

// TestArgumentNodes checks the node of arguments that start with a bracket
// without being one bracketed value; the wanted nodes are CPython 3.11's
// (ast.parse of the same call). A corpus file would do the same against
// CPython, but would change the seeds of TestMutatedSourcesMatchCPython.
func TestArgumentNodes(t *testing.T) {
	for _, c := range []struct {
		arg, want string
	}{
		{arg: "(a) in b", want: "Compare"},
		{arg: "(a in b) + c", want: "BinOp"},
		{arg: "[x] == y", want: "Compare"},
		{arg: "(p or q) and r", want: "BoolOp"},
		{arg: "(1, 2)[0]", want: "Subscript"},
		{arg: "(s) if t else u", want: "IfExp"},
		{arg: "((((x))))", want: "Name"},
		{arg: "((x, y))", want: "Tuple"},
		{arg: "(((1)))", want: "Constant"},
		{arg: "(())", want: "Tuple"},
	} {
		t.Run(c.arg, func(t *testing.T) {
			calls, err := TopLevelCalls("register_cpu_ci("+c.arg+")\n", isRegister)
			if err != nil || len(calls) != 1 || len(calls[0].Args) != 1 {
				t.Fatalf("wanted one call with one argument, got %v, %v", calls, err)
			}
			if got := calls[0].Args[0].Value.Node; got != c.want {
				t.Errorf("wanted %q, got %q", c.want, got)
			}
		})
	}
}
