// Package history stands in for github.com/vito/bubbline/history, which the Go
// module proxy does not serve: it reads and writes a line history as a text file.
package history

import (
	"os"
	"strings"
)

// LoadHistory reads one entry a line from path.
func LoadHistory(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := strings.TrimRight(string(b), "\n")
	if s == "" {
		return nil, nil
	}
	return strings.Split(s, "\n"), nil
}

// SaveHistory writes one entry a line to path.
func SaveHistory(entries []string, path string) error {
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(e)
		b.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}
