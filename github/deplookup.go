package github

import (
	"context"
	"fmt"
	"strings"

	"github.com/radixark/miles-ci/deps"
)

// DependencyPR is what GitHub says of a dependency ref written as #N, shown
// next to the decision so a maintainer sees at once whether #N is the PR they meant.
type DependencyPR struct {
	// Dependency is sglang or megatron.
	Dependency string `json:"dependency"`
	// Repo is the dependency's repository, e.g. sgl-project/sglang.
	Repo string `json:"repo"`
	// Number is N of #N.
	Number int `json:"number"`
	// Title, State and HeadSHA are GitHub's answer ("" when not looked up).
	Title   string `json:"title,omitempty"`
	State   string `json:"state,omitempty"`
	HeadSHA string `json:"head_sha,omitempty"`
	// Skipped says why GitHub was not asked or did not answer ("" when it did).
	Skipped string `json:"skipped,omitempty"`
}

// LookupDependencyPRs looks up every #N ref of a dependency decision in its
// repository. With a nil client (offline, or no token) each lookup is
// reported as skipped; a failed lookup is reported too. It never fails: the
// decision stands whatever GitHub says.
func LookupDependencyPRs(ctx context.Context, c *Client, d deps.Decision, offlineWhy string) []DependencyPR {
	var out []DependencyPR
	for _, side := range []struct {
		name, repo string
		ref        deps.Ref
	}{
		{"sglang", deps.SGLangRepo, d.SGLang},
		{"megatron", deps.MegatronRepo, d.Megatron},
	} {
		if !strings.HasPrefix(side.ref.Ref, "#") {
			continue
		}
		n, err := ParseNumber(side.ref.Ref)
		if err != nil {
			continue // deps.Resolve already refused a malformed pin
		}
		dp := DependencyPR{Dependency: side.name, Repo: side.repo, Number: n}
		if c == nil {
			dp.Skipped = "lookup skipped: " + offlineWhy
		} else if p, err := c.GetPR(ctx, side.repo, n); err != nil {
			dp.Skipped = "lookup failed: " + err.Error()
		} else {
			dp.Title, dp.State, dp.HeadSHA = p.Title, p.State, p.HeadSHA
		}
		out = append(out, dp)
	}
	return out
}

// String is the one-line note printed beside the decision.
func (d DependencyPR) String() string {
	ref := fmt.Sprintf("%s#%d", d.Repo, d.Number)
	if d.Skipped != "" {
		return ref + ": " + d.Skipped
	}
	sha := d.HeadSHA
	if len(sha) > 12 {
		sha = sha[:12]
	}
	return fmt.Sprintf("%s: %q (%s, head %s)", ref, d.Title, d.State, sha)
}
