package metricgate

import (
	"math/big"
	"strings"
	"unicode"
)

// Provenance is where a stored run came from (RunProvenance): audit data,
// never part of a baseline's key. A nil field is NULL.
type Provenance struct {
	CommitSHA  string  `json:"commit_sha"`
	PRNumber   *int64  `json:"pr_number"`
	RunID      *int64  `json:"github_run_id"`
	RunAttempt *int64  `json:"github_run_attempt"`
	Event      *string `json:"event_name"`
	Ref        *string `json:"ref"`
}

// ProvenanceFromEnv is ci_utils.gate_provenance_from_env over an
// environment (lookup is os.LookupEnv's shape): the commit from
// GITHUB_SHA, else the sha part of GITHUB_COMMIT_NAME ({sha}_{pr|non-pr});
// the PR number from its tail; the run id and attempt as ints (a missing,
// empty or unreadable one is NULL); the event and ref as given.
func ProvenanceFromEnv(lookup func(string) (string, bool)) Provenance {
	get := func(name string) string {
		v, _ := lookup(name)
		return v
	}
	p := Provenance{RunID: pyIntEnv(get("GITHUB_RUN_ID")), RunAttempt: pyIntEnv(get("GITHUB_RUN_ATTEMPT"))}
	name := get("GITHUB_COMMIT_NAME")
	if sha := get("GITHUB_SHA"); sha != "" {
		p.CommitSHA = sha
	} else if i := strings.LastIndex(name, "_"); name != "" && i >= 0 {
		p.CommitSHA = name[:i]
	} else {
		p.CommitSHA = name
	}
	if i := strings.LastIndex(name, "_"); name != "" && i >= 0 && name[i+1:] != "non-pr" {
		p.PRNumber = pyIntEnv(name[i+1:])
	}
	if v, ok := lookup("GITHUB_EVENT_NAME"); ok {
		p.Event = &v
	}
	if v, ok := lookup("GITHUB_REF"); ok {
		p.Ref = &v
	}
	return p
}

// pyIntEnv is int(text) as Python reads it (surrounding whitespace, a
// sign, underscores between digits), nil where Python raises ValueError,
// and where the value does not fit the store's 64-bit integer.
func pyIntEnv(text string) *int64 {
	t := strings.TrimFunc(text, unicode.IsSpace)
	body := strings.TrimLeft(t, "+-")
	if len(t)-len(body) > 1 || body == "" || body[0] == '_' || body[len(body)-1] == '_' || strings.Contains(body, "__") {
		return nil
	}
	for _, c := range body {
		if c != '_' && (c < '0' || c > '9') {
			return nil
		}
	}
	n, ok := new(big.Int).SetString(strings.ReplaceAll(t, "_", ""), 10)
	if !ok || !n.IsInt64() {
		return nil
	}
	v := n.Int64()
	return &v
}
