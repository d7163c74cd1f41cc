package policy

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// DiffEntry is one entry of `git diff --name-status -z -M`.
type DiffEntry struct {
	// Status is the status letter with its score, e.g. M, A, R100.
	Status string
	// Paths holds one path, or two (old, new) for renames and copies.
	Paths []string
}

// ParseNameStatus parses the output of `git diff --name-status -z -M`. An
// unusable diff (empty, not NUL-terminated, not UTF-8, an unknown status, a
// missing or empty path) is an error: callers fail open on it and treat every
// PR GPU stage as affected.
func ParseNameStatus(data []byte) ([]DiffEntry, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("the diff is empty")
	}
	if data[len(data)-1] != 0 {
		return nil, fmt.Errorf("the diff is not NUL-terminated; produce it with git diff --name-status -z -M")
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("the diff is not valid UTF-8")
	}
	fields := bytes.Split(data[:len(data)-1], []byte{0})
	var entries []DiffEntry
	for i := 0; i < len(fields); {
		status := string(fields[i])
		n, ok := statusPaths(status)
		if !ok {
			return nil, fmt.Errorf("entry %d: unknown status %q", len(entries)+1, status)
		}
		if i+n >= len(fields) {
			return nil, fmt.Errorf("entry %d (%s): a path is missing", len(entries)+1, status)
		}
		e := DiffEntry{Status: status}
		for k := 1; k <= n; k++ {
			p := string(fields[i+k])
			if p == "" {
				return nil, fmt.Errorf("entry %d (%s): a path is empty", len(entries)+1, status)
			}
			e.Paths = append(e.Paths, p)
		}
		entries = append(entries, e)
		i += 1 + n
	}
	return entries, nil
}

// statusPaths tells how many paths follow a status: one for A D M T U X B,
// two for R or C followed by 1-3 digits.
func statusPaths(s string) (int, bool) {
	if len(s) == 1 {
		switch s[0] {
		case 'A', 'D', 'M', 'T', 'U', 'X', 'B':
			return 1, true
		}
		return 0, false
	}
	if len(s) >= 2 && len(s) <= 4 && (s[0] == 'R' || s[0] == 'C') {
		for i := 1; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0, false
			}
		}
		return 2, true
	}
	return 0, false
}
