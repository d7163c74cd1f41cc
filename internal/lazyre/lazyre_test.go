package lazyre

import (
	"regexp"
	"testing"
)

func TestSameAsRegexp(t *testing.T) {
	const expr = `^([a-z]+)-([0-9]{1,3})$`
	lazy, eager := New(expr), regexp.MustCompile(expr)
	for _, s := range []string{"abc-12", "abc-1234", "-1", "x-0\nx-1"} {
		if lazy.MatchString(s) != eager.MatchString(s) {
			t.Errorf("MatchString(%q) differs", s)
		}
		if got, want := lazy.FindStringSubmatch(s), eager.FindStringSubmatch(s); len(got) != len(want) {
			t.Errorf("FindStringSubmatch(%q) = %q, want %q", s, got, want)
		}
	}
	if got := lazy.FindAllStringSubmatch("a-1", -1); len(got) != 1 || got[0][2] != "1" {
		t.Errorf("FindAllStringSubmatch = %q", got)
	}
	if lazy.Regexp().String() != expr {
		t.Error("Regexp() is not the expression")
	}
}

func TestInvalidPanicsOnUse(t *testing.T) {
	r := New(`(`) // no panic yet
	defer func() {
		if recover() == nil {
			t.Error("an invalid expression did not panic on use")
		}
	}()
	r.MatchString("x")
}
