package policy

import (
	"fmt"
	"strings"

	"github.com/radixark/miles-ci/policy/pysource"
)

// EstTimeSite is one registration of a file with where its est_time value
// is in the file's bytes, for an edit that replaces the literal in place
// (rules §13.2).
type EstTimeSite struct {
	Registration
	// Start and End are the value's byte offsets in the file as read
	// (without parentheses around it, as ast places the node).
	Start, End int
	// MultiLine is set when the value spans more than one line.
	MultiLine bool
}

// EstTimeSites reads a test file's registrations as ParseFile does and
// places each one's est_time value: the first positional argument, else
// the est_time keyword (update_est_time.py's _est_time_node).
func (t *Tables) EstTimeSites(rel string, src []byte) ([]EstTimeSite, error) {
	text := string(src)
	calls, err := registrationCalls(rel, text)
	if err != nil {
		return nil, err
	}
	regs, err := t.or().callRegistrations(rel, calls)
	if err != nil {
		return nil, err
	}
	normalized := text
	if strings.Contains(text, "\r") {
		normalized = strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(text)
	}
	sites := make([]EstTimeSite, len(regs))
	for i, c := range calls {
		found := false
		for _, a := range c.Args {
			if a.Kind == pysource.Positional || (a.Kind == pysource.Keyword && a.Keyword == "est_time") {
				sites[i] = EstTimeSite{Registration: regs[i], Start: rawOffset(text, a.Start), End: rawOffset(text, a.End),
					MultiLine: strings.Contains(normalized[a.Start:a.End], "\n")}
				found = true
				break
			}
		}
		if !found {
			// callRegistrations requires est_time, so this is a bug here.
			return nil, &RegistryError{File: rel, Line: c.Line, Msg: fmt.Sprintf("%s() has no est_time value to place", c.Func)}
		}
	}
	return sites, nil
}

// rawOffset maps an offset in the normalized source (every \r\n and \r a
// \n) to the same place in src.
func rawOffset(src string, normalized int) int {
	if !strings.Contains(src, "\r") {
		return normalized
	}
	n := 0
	for i := 0; i < len(src); i++ {
		if n == normalized {
			return i
		}
		if src[i] == '\r' && i+1 < len(src) && src[i+1] == '\n' {
			i++
		}
		n++
	}
	return len(src)
}
