package stagerun

import (
	"fmt"
	"strings"

	"github.com/radixark/miles-ci/report"
)

// Text renders a spec for a person: what `miles-ci run --dry-run` prints.
// The fixed scripts show as <name script>; --json has their text.
func (s Spec) Text() string {
	var b strings.Builder
	name := s.Stage
	switch {
	case s.File != "":
		name = fmt.Sprintf("%s on %s", report.Printable(s.File), s.Stage)
	case s.Shard != nil:
		name = fmt.Sprintf("%s %s (0-based id=%d)", s.Stage, s.Shard, s.Shard.ID)
	}
	fmt.Fprintf(&b, "%s (%s)", name, s.HW)
	if s.Cadence != "" {
		fmt.Fprintf(&b, ", cadence %s", s.Cadence)
	}
	fmt.Fprintf(&b, "\nimage: %s\n", s.Image)
	b.WriteString("env:\n")
	for _, e := range s.Env {
		fmt.Fprintf(&b, "  %s=%s\n", e.Name, report.Printable(e.Value))
	}
	b.WriteString("run env (set in the run phase, after every cached layer):\n")
	for _, e := range s.RunEnv {
		fmt.Fprintf(&b, "  %s=%s\n", e.Name, report.Printable(e.Value))
	}
	b.WriteString("caches:\n")
	for _, c := range s.Caches {
		fmt.Fprintf(&b, "  %s at %s (%s)\n", c.Key, c.Path, c.Sharing)
	}
	if s.CachesWithheld != "" {
		fmt.Fprintf(&b, "  none (%s)\n", s.CachesWithheld)
	}
	secrets := strings.Join(s.Secrets, ", ")
	if s.SecretsWithheld != "" {
		secrets = "none (" + s.SecretsWithheld + ")"
	} else if secrets == "" {
		secrets = "none"
	}
	fmt.Fprintf(&b, "secrets (env, never argv): %s\n", secrets)
	gpu := string(s.GPU.Kind)
	if s.GPU.Kind != NoGPU {
		gpu += " " + (GPUs{Devices: s.GPU.Devices}).String()
	}
	if s.GPU.VisibleEnv != "" {
		v := s.GPU.Visible
		if v == "" {
			v = "(unset)"
		}
		gpu += fmt.Sprintf(", %s=%s", s.GPU.VisibleEnv, v)
	}
	fmt.Fprintf(&b, "gpus: %s\n", gpu)
	if s.ShmBytes > 0 {
		fmt.Fprintf(&b, "/dev/shm: %d GiB\n", s.ShmBytes>>30)
	}
	if len(s.Ulimits) > 0 {
		var u []string
		for _, l := range s.Ulimits {
			u = append(u, l.Name+"="+l.Value)
		}
		fmt.Fprintf(&b, "ulimits: %s\n", strings.Join(u, " "))
	}
	for _, d := range s.Data {
		fmt.Fprintf(&b, "data: %s at %s\n", d.Name, strings.Join(d.Paths, ", "))
	}
	if len(s.Resolve) > 0 {
		b.WriteString("resolve (uncached, before the steps; the fetches below then use the commit):\n")
		for _, r := range s.Resolve {
			fmt.Fprintf(&b, "  %s %s (%s): %s%s\n", r.Dependency, report.Printable(r.Ref), r.Origin, argvText(r.Argv), inDir(r.Workdir))
		}
	}
	b.WriteString("steps:\n")
	for i, st := range s.Steps {
		if i == 0 || st.Name != s.Steps[i-1].Name || st.Phase != s.Steps[i-1].Phase {
			fmt.Fprintf(&b, "  [%s] %s\n", st.Phase, st.Name)
		}
		for _, f := range st.Files {
			fmt.Fprintf(&b, "      copy %s to %s\n", f.Path, f.Dest)
		}
		for _, e := range st.Env {
			fmt.Fprintf(&b, "      env %s=%s\n", e.Name, report.Printable(e.Value))
		}
		switch st.Kind {
		case KindSource:
			fmt.Fprintf(&b, "      copy the checkout to %s\n", Workspace)
		case KindPatch:
			fmt.Fprintf(&b, "      %s%s\n      else %s\n      else fail: Selected Megatron ref is incompatible with the ROCm patch\n      then, if the first check passed: %s\n",
				argvText(st.Patch.Check), inDir(st.Workdir), argvText(st.Patch.ReverseCheck), argvText(st.Patch.Apply))
		default:
			priv := ""
			if st.Privileged {
				priv = " (privileged)"
			}
			fmt.Fprintf(&b, "      %s%s%s\n", argvText(st.Argv), inDir(st.Workdir), priv)
		}
	}
	if s.PlanFromContainer != "" {
		b.WriteString("tests: the container's own run_suite.py --list-only (" + s.PlanFromContainer + ")\n")
	} else {
		b.WriteString("tests (miles-ci's plan):\n")
	}
	for _, t := range s.Tests {
		if t.TimeoutS != nil {
			fmt.Fprintf(&b, "  %s (timeout %ds)\n", report.Printable(t.File), *t.TimeoutS)
		} else {
			fmt.Fprintf(&b, "  %s\n", report.Printable(t.File))
		}
	}
	if len(s.Tests) == 0 && s.PlanFromContainer == "" {
		b.WriteString("  none\n")
	}
	for _, t := range s.Skipped {
		fmt.Fprintf(&b, "  skipped: %s (%s)\n", report.Printable(t.File), report.Printable(t.Reason))
	}
	return b.String()
}

// argvText shows an argv on one line (its words can be a checkout's file
// names, a PR's refs and labels: report.Printable); a fixed script shows
// by name.
func argvText(argv []string) string {
	if len(argv) >= 4 && argv[0] == "bash" && argv[1] == "-c" && scripts[argv[3]] == argv[2] {
		return "bash -c <" + argv[3] + " script> " + report.Printable(strings.Join(argv[4:], " "))
	}
	if len(argv) >= 4 && argv[0] == "python3" && argv[1] == "-ISc" && argv[2] == runWrapper {
		return "python3 -ISc <run wrapper> " + report.Printable(strings.Join(argv[4:], " "))
	}
	return report.Printable(strings.Join(argv, " "))
}

func inDir(dir string) string {
	if dir == "" {
		return ""
	}
	return "   (in " + dir + ")"
}

// ExecFailure explains a failed command for an error message: the command,
// its exit status and the end of its output (stderr, else stdout).
func ExecFailure(argv []string, code int, stdout, stderr string) string {
	out := strings.TrimSpace(stderr)
	if out == "" {
		out = strings.TrimSpace(stdout)
	}
	lines := strings.Split(out, "\n")
	if len(lines) > 20 {
		lines = append([]string{"..."}, lines[len(lines)-20:]...)
	}
	out = strings.Join(lines, "\n")
	if len(out) > 4096 {
		out = "..." + out[len(out)-4096:]
	}
	return fmt.Sprintf("`%s` exited with status %d:\n%s", argvText(argv), code, out)
}
