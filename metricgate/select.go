package metricgate

import (
	"errors"
	"fmt"
	"math"
	"math/big"

	"github.com/radixark/miles-ci/policy/pysource"
	"github.com/radixark/miles-ci/pyjson"
)

// selection is one comparison value of selection.py: step is the
// coordinate (-1 for "last"), atStep where it came from (nil: the point had
// no int step).
type selection struct {
	step   *big.Int
	atStep *big.Int
	value  float64
}

// errSelect is a selection.py SelectionError: the coordinate's verdict is
// ERROR. Any other error is one Python raises past the gate (the file then
// gets no verdict).
type errSelect struct{ msg string }

func (e *errSelect) Error() string { return e.msg }

// point is one numeric point of a series.
type point struct {
	step  *big.Int // nil: not an int
	value float64
}

// numericPoints is selection.py's _numeric_points over a series as the
// reader left it.
func numericPoints(series []pyjson.Value) ([]point, error) {
	var out []point
	for _, p := range series {
		var n int
		switch p.Kind {
		case pyjson.List:
			n = len(p.List)
		case pyjson.Str:
			n = len(pyjson.Runes(p.Str))
		case pyjson.Dict:
			n = p.Dict.Len()
		default:
			return nil, fmt.Errorf("TypeError: object of type '%s' has no len() (a point of the series)", typeName(p))
		}
		if n < 2 {
			continue
		}
		if p.Kind == pyjson.Dict {
			return nil, errors.New("KeyError: 0 (a point of the series is an object)")
		}
		if p.Kind == pyjson.Str {
			continue // its characters are strings, not numbers
		}
		step, value := p.List[0], p.List[1]
		var f float64
		switch value.Kind {
		case pyjson.Float:
			f = value.Float
		case pyjson.Int:
			f, _ = new(big.Float).SetInt(value.Int).Float64()
			if math.IsInf(f, 0) {
				return nil, errors.New("OverflowError: int too large to convert to float (a value of the series)")
			}
		default:
			continue
		}
		pt := point{value: f}
		if step.Kind == pyjson.Int {
			pt.step = step.Int
		}
		out = append(out, pt)
	}
	return out, nil
}

// selectValues is selection.py's select.
func selectValues(series []pyjson.Value, steps Steps) ([]selection, error) {
	points, err := numericPoints(series)
	if err != nil {
		return nil, err
	}
	switch steps.Mode {
	case "last":
		if len(points) == 0 {
			return nil, &errSelect{"series has no numeric point"}
		}
		p := points[len(points)-1]
		if math.IsInf(p.value, 0) || math.IsNaN(p.value) {
			return nil, &errSelect{fmt.Sprintf("last: non-finite value %s at the last point (step %s)", pysource.FloatRepr(p.value), stepRepr(p.step))}
		}
		return []selection{{step: big.NewInt(-1), atStep: p.step, value: p.value}}, nil
	case "all":
		if len(points) == 0 {
			return nil, &errSelect{"series has no numeric point"}
		}
		var out []selection
		seen := map[string]bool{}
		for _, p := range points {
			if p.step == nil {
				return nil, &errSelect{"all: a numeric point carries no step index"}
			}
			if seen[p.step.String()] {
				return nil, &errSelect{fmt.Sprintf("all: duplicate step %s in series", p.step)}
			}
			if math.IsInf(p.value, 0) || math.IsNaN(p.value) {
				return nil, &errSelect{fmt.Sprintf("all: non-finite value %s at step %s", pysource.FloatRepr(p.value), p.step)}
			}
			seen[p.step.String()] = true
			out = append(out, selection{step: p.step, atStep: p.step, value: p.value})
		}
		return out, nil
	}
	byStep := map[string]float64{}
	for _, p := range points {
		if p.step == nil {
			continue
		}
		if _, dup := byStep[p.step.String()]; dup {
			return nil, &errSelect{fmt.Sprintf("steps: duplicate step %s in series", p.step)}
		}
		byStep[p.step.String()] = p.value
	}
	var out []selection
	for _, k := range steps.List {
		v, ok := byStep[k.String()]
		if !ok {
			return nil, &errSelect{fmt.Sprintf("steps: required step %s missing from series", k)}
		}
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, &errSelect{fmt.Sprintf("steps: non-finite value %s at required step %s", pysource.FloatRepr(v), k)}
		}
		out = append(out, selection{step: k, atStep: k, value: v})
	}
	return out, nil
}

func stepRepr(s *big.Int) string {
	if s == nil {
		return "None"
	}
	return s.String()
}
