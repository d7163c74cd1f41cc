package typedjson

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

type withAny struct {
	X any `json:"x"`
}

type withMapOfStructs struct {
	X map[string]testPart `json:"x"`
}

type withMarshaler struct {
	X json2 `json:"x"`
}

type json2 struct{}

func (json2) MarshalJSON() ([]byte, error) { return []byte("{}"), nil }

type withTime struct {
	At    time.Time  `json:"at"`
	Maybe *time.Time `json:"maybe,omitempty"`
	Skip  string     `json:"-"`
	// Left is in the JSON, but no answer of the module holds it.
	Left any `json:"left,omitempty" typedjson:"-"`
}

func TestGenerateRefuses(t *testing.T) {
	docs := func(reflect.Type) (string, map[string]string) { return "", nil }
	for _, c := range []struct {
		root     reflect.Type
		reserved []string
		want     string
	}{
		{reflect.TypeFor[withAny](), nil, "R.x is a interface {}, which has no Dagger type"},
		{reflect.TypeFor[withMapOfStructs](), nil, "only a map of strings to strings, ints, floats or bools"},
		{reflect.TypeFor[withMarshaler](), nil, "writes its own JSON"},
		{reflect.TypeFor[testPlan](), []string{"testPart"}, "would be named testPart, as the module's own type is"},
	} {
		_, err := Generate(Config{Roots: []Root{{Name: "R", Doc: "R.", Type: c.root}}, Reserved: c.reserved, Docs: docs})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Generate(%s): wanted an error with %q, got %v", c.root, c.want, err)
		}
	}
	src, err := Generate(Config{Header: "h", Roots: []Root{{Name: "R", Doc: "R.", Type: reflect.TypeFor[withTime]()}}, Docs: docs})
	if err != nil || !strings.Contains(string(src), "At string") || !strings.Contains(string(src), "Maybe string") || strings.Contains(string(src), "Skip") || strings.Contains(string(src), "Left") {
		t.Errorf("wanted times as strings and no Skip or Left, got %v\n%s", err, src)
	}
}
