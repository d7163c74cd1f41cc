package ci

import (
	"fmt"

	"github.com/radixark/miles-ci/cirun"
	"github.com/radixark/miles-ci/internal/plural"
	"github.com/radixark/miles-ci/usecase"
)

// substituteNotices say what each --substitute did in the run: how many
// shards it put on another model's devices, or that it put none (a model
// no stage of this event needs, or one the host has), so a substitute that
// was dropped or mistyped is never silent.
func substituteNotices(subs []cirun.Substitute, rep *cirun.Report) []usecase.Message {
	var out []usecase.Message
	for _, s := range subs {
		n := 0
		for _, j := range rep.Jobs {
			if j.Substituted == s.String() {
				n++
			}
		}
		if n == 0 {
			out = append(out, usecase.Warning(fmt.Sprintf("--substitute %s runs no job: no job of this run needs %s devices that the host lacks", s, s.From)))
			continue
		}
		out = append(out, usecase.Notice(fmt.Sprintf("--substitute %s runs %s of %s stages on %s devices", s, plural.N(n, "job"), s.From, s.To)))
	}
	return out
}
