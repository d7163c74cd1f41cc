package history

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ParseRows decodes and checks a kept batch (RowsFile); name is used in
// errors. It refuses unknown fields and a second JSON value, and checks the
// batch as Write would.
func ParseRows(name string, data []byte) (Batch, error) {
	var b Batch
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return Batch{}, fmt.Errorf("%s is not the rows a run kept (%s): %w", name, RowsFile, err)
	}
	if dec.More() {
		return Batch{}, fmt.Errorf("%s holds more than one JSON value; it must be one batch", name)
	}
	if _, err := b.Validate(); err != nil {
		return Batch{}, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}
