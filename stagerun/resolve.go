package stagerun

import (
	"fmt"
	"strings"

	"github.com/radixark/miles-ci/internal/lazyre"
)

// maxLsRemoteBytes bounds the ls-remote output read for one ref.
const maxLsRemoteBytes = 1 << 20

var lsRemoteLine = lazyre.New(`^([0-9a-f]{40}|[0-9a-f]{64})\t(\S+)$`)

// ParseLsRemote picks the commit `git fetch origin FETCH` would fetch from
// the output of `git ls-remote REMOTE FETCH`: the first ref in git's own
// order of expansion (FETCH, refs/FETCH, refs/tags/FETCH, refs/heads/FETCH,
// refs/remotes/FETCH, refs/remotes/FETCH/HEAD), with an annotated tag
// peeled to its commit. ok is false when no advertised ref matches.
func ParseLsRemote(out, fetch string) (commit string, ok bool, err error) {
	if len(out) > maxLsRemoteBytes {
		return "", false, fmt.Errorf("git ls-remote printed %d bytes for one ref, more than %d", len(out), maxLsRemoteBytes)
	}
	refs := map[string]string{}
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		m := lsRemoteLine.FindStringSubmatch(line)
		if m == nil {
			return "", false, fmt.Errorf("git ls-remote printed %q, not \"<commit>\\t<ref>\"", line)
		}
		refs[m[2]] = m[1]
	}
	for _, name := range []string{fetch, "refs/" + fetch, "refs/tags/" + fetch, "refs/heads/" + fetch,
		"refs/remotes/" + fetch, "refs/remotes/" + fetch + "/HEAD"} {
		if peeled, found := refs[name+"^{}"]; found {
			return peeled, true, nil
		}
		if sha, found := refs[name]; found {
			return sha, true, nil
		}
	}
	return "", false, nil
}
