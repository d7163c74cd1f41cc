package plural

import "testing"

func TestN(t *testing.T) {
	for _, c := range []struct {
		n    int
		noun string
		want string
	}{
		{1, "file", "1 file"},
		{0, "file", "0 files"},
		{2, "file", "2 files"},
		{1, "pass", "1 pass"},
		{3, "pass", "3 passes"},
		{2, "batch", "2 batches"},
	} {
		if got := N(c.n, c.noun); got != c.want {
			t.Errorf("N(%d, %q): wanted %q, got %q", c.n, c.noun, c.want, got)
		}
	}
}
