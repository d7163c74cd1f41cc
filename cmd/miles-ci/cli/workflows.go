package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/radixark/miles-ci/usecase"
	"github.com/radixark/miles-ci/workflows"
)

func init() {
	register("workflows", "write GitHub Actions workflows whose stage jobs call the Dagger module", runWorkflows)
	register("report", "render a run's results folder (run's, or ci's: the whole graph and each failed shard) as text or a step summary", runReport)
}

func runWorkflows(args []string, env Env) int {
	fs := newFlagSet("workflows", "--out DIR [--repo DIR] [--ref R] [--dagger-version V] [--go-version V]", env)
	out := fs.String("out", "DIR", "folder to write pr-test.yml and pr-test-rocm.yml into (created if missing), e.g. .github/workflows", required())
	repo := fs.String("repo", "DIR", "take the stage roster from this Miles checkout's workflows (default: the built-in roster of rules §1)")
	ref := fs.String("ref", "R", "the miles-ci version the workflows run (default "+workflows.DefaultOptions.Ref+")")
	dagger := fs.String("dagger-version", "V", "the Dagger CLI the stage jobs install (default "+workflows.DefaultOptions.DaggerVersion+")")
	goVersion := fs.String("go-version", "V", "the Go toolchain that runs the miles-ci CLI (default "+workflows.DefaultOptions.GoVersion+")")
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	o := workflows.DefaultOptions
	for _, f := range []struct {
		name string
		dst  *string
		val  string
	}{{"ref", &o.Ref, *ref}, {"dagger-version", &o.DaggerVersion, *dagger}, {"go-version", &o.GoVersion, *goVersion}} {
		if fs.Given(f.name) {
			*f.dst = f.val
		}
	}
	roster, msgs, err := usecase.Roster(usecase.RosterRequest{Repo: *repo, Given: usecase.Given{Repo: fs.Given("repo")}})
	printMessages(env, msgs)
	if err != nil {
		return fail(env, err)
	}
	files, err := workflows.Generate(roster, o)
	if err != nil {
		return fail(env, err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fail(env, fmt.Errorf("--out %s: %w", *out, err))
	}
	for _, f := range files {
		path := filepath.Join(*out, f.Name)
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			return fail(env, fmt.Errorf("writing %s: %w", path, err))
		}
		fmt.Fprintf(env.Stdout, "wrote %s\n", path)
	}
	return 0
}

func runReport(args []string, env Env) int {
	fs := newFlagSet("report", "--results DIR [--github-step-summary FILE] [--json]", env)
	dir := fs.String("results", "DIR", "the results folder a run (run, file-run or ci) wrote (summary.json inside)", required())
	summary := fs.String("github-step-summary", "FILE", summaryHelp)
	asJSON := fs.Bool("json", "print the checked summary.json instead of text")
	if code := fs.parseOrExit(args); code >= 0 {
		return code
	}
	ans, err := usecase.Report(usecase.ReportRequest{Results: *dir})
	if err != nil {
		return fail(env, err)
	}
	if n := len(ans.Unproven); n > 0 {
		warn(env, fmt.Sprintf("--results %s fails the checks of a results folder: %d shard(s) its record says passed are not proven by their own folders (the lines \"not proven\" below); the verdict is no pass, and --rerun-failed runs them again", *dir, n))
	}
	gh := githubFlags{summary: summary, given: fs.Given}
	if err := gh.writeSummary(env, ans.Markdown); err != nil {
		return fail(env, err)
	}
	if *asJSON {
		var v any = ans.Summary
		if ans.CI != nil {
			v = ans.CI
		}
		if code := printJSON(env, v); code != 0 {
			return code
		}
	} else {
		io.WriteString(env.Stdout, ans.Text)
	}
	return ans.ExitStatus()
}
