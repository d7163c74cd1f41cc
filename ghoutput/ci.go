package ghoutput

import (
	"fmt"
	"strings"

	"github.com/radixark/miles-ci/cirun"
)

// CIMarkdown is the run's step summary: the Mermaid graph coloured by
// outcome, then one row per job (a reason quotes the container: plain text).
func CIMarkdown(rep *cirun.Report, g *cirun.Graph, reuse string) string {
	var b strings.Builder
	b.WriteString("## miles-ci ci\n\n```mermaid\n" + rep.Mermaid(g) + "```\n\n| job | state | GPUs | reason |\n|---|---|---|---|\n")
	for _, j := range rep.Jobs {
		gpus := fmt.Sprint(j.GPUs)
		if j.Host != "" {
			gpus += " on " + j.Host
		}
		if len(j.Devices) > 0 {
			gpus += " [" + j.Devices.String() + "]"
		}
		if j.Substituted != "" {
			gpus += " (substituted " + j.Substituted + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", text(j.Title()), j.State, text(gpus), text(j.Reason))
	}
	b.WriteString("\n" + rep.Tally() + "\n")
	if t := rep.TimelineLine(); t != "" {
		b.WriteString("\n" + t + "\n")
	}
	if reuse != "" {
		b.WriteString("\n" + reuse + "\n")
	}
	if rep.Cancelled {
		b.WriteString("\n**cancelled**: the run was interrupted; the finished shards keep their results.\n")
	}
	return b.String()
}
