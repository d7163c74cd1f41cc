// Package encode holds the output encoders the miles-ci CLI and the Dagger
// module share, so both print the same bytes for the same answer.
package encode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// JSON renders v as indented JSON (two spaces, no HTML escaping) with a final
// newline: what `miles-ci ... --json` prints and what the module returns. A
// value JSON cannot hold is an error that says what to do.
func JSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		var uv *json.UnsupportedValueError
		if errors.As(err, &uv) && uv.Str == "+Inf" {
			// Python reads est_time=1e400 as inf; JSON has no such number.
			return nil, errors.New("the result cannot be written as JSON: an est_time is inf (a literal such as 1e400); give every test a finite est_time, or use the text output")
		}
		return nil, fmt.Errorf("the result cannot be written as JSON: %w", err)
	}
	return b.Bytes(), nil
}

// CompactJSON renders v as one line of JSON with no HTML escaping, the form
// GitHub step outputs carry.
func CompactJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // callers pass plain strings and slices, which always encode
	return strings.TrimSuffix(b.String(), "\n")
}
