// Miles CI as a Dagger module: run any stage shard of the Miles CI in its
// container, from its image, dependency refs and patch, exactly as the
// workflows do, and answer what CI runs where.
//
// This file is a thin adapter: it turns typed Dagger arguments into the same
// requests the miles-ci command builds (usecase), and renders their
// container spec (package stagerun) on the engine through the adapter both
// front ends share (cmd/miles-ci/engine; adapter.go hands it its inputs).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/radixark/miles-ci/deps"
	"github.com/radixark/miles-ci/ghoutput"
	"github.com/radixark/miles-ci/github"
	"github.com/radixark/miles-ci/internal/dagger"
	"github.com/radixark/miles-ci/internal/encode"
	"github.com/radixark/miles-ci/internal/fsinput"
	"github.com/radixark/miles-ci/internal/printable"
	"github.com/radixark/miles-ci/stagerun"
	"github.com/radixark/miles-ci/usecase"
)

// MilesCi runs Miles CI stage shards and answers what CI runs where.
// The constructor takes the checkout and the facts of the run (PR body,
// dispatch inputs, GPUs, secrets, data folders) that every stage shares.
type MilesCi struct {
	// +private
	Source *dagger.Directory
	// +private
	PrBodyFile *dagger.File
	// +private
	SglangPr string
	// +private
	MegatronPr string
	// +private
	ImageTag string
	// +private
	PrNumber int
	// +private
	HeadSha string
	// +private
	Fork bool
	// +private
	Gpus string
	// +private
	VisibleDevices string
	// +private
	WandbApiKey *dagger.Secret
	// +private
	NeonDatabaseUrl *dagger.Secret
	// +private
	HfToken *dagger.Secret
	// +private
	Models *dagger.Directory
	// +private
	Datasets *dagger.Directory
	// +private
	Pr int
	// +private
	GithubRepo string
	// +private
	GithubToken *dagger.Secret
	// +private
	GithubApiUrl string
	// +private
	GithubEnv []string
}

// New sets up a run of Miles CI on a checkout. What only some calls need
// comes in chained facets that return a copy: with-pr (a pull request read
// from GitHub), with-pull-request (its facts given here), with-dispatch (the
// workflow_dispatch inputs), with-secrets, with-data and with-github-env.
func New(
	// The Miles checkout to run (default: the directory the module is called from).
	// +defaultPath="/"
	// +ignore=[".git", "**/__pycache__", "**/.pytest_cache", "**/.venv", "**/*.egg-info"]
	source *dagger.Directory,
	// GPUs for the container: all, none (an engine without GPU support) or device ids such as 0,1; for ci, ids of a model (h200:0-7, none:h200:0-3) put each shard on devices of its stage's model.
	// +optional
	// +default="all"
	gpus string,
	// CUDA_VISIBLE_DEVICES (or HIP_VISIBLE_DEVICES on ROCm), e.g. 4,5: the host's share of its GPUs.
	// +optional
	visibleDevices string,
) *MilesCi {
	return &MilesCi{Source: source, Gpus: gpus, VisibleDevices: visibleDevices}
}

// inputs are the constructor's facts as a run request's inputs, with the
// checkout's tests/ and release-lock.json exported to dir; pr is the pull
// request --pr read (JSON, "" without --pr).
func (m *MilesCi) inputs(ctx context.Context, dir, pr string) (usecase.Inputs, error) {
	in := usecase.Inputs{Repo: dir, SGLangInput: m.SglangPr, MegatronInput: m.MegatronPr, ImageTag: m.ImageTag,
		PRNumber: prNumber(m.PrNumber), HeadSHA: m.HeadSha, Fork: m.Fork, GPUs: m.Gpus, VisibleDevices: m.VisibleDevices,
		Models: m.Models != nil, Datasets: m.Datasets != nil,
		Given: usecase.Given{Body: m.PrBodyFile != nil, Number: m.PrNumber != 0, HeadSHA: m.HeadSha != ""}}
	var err error
	if in.GitHub, err = usecase.GitHubFromArgs(m.GithubEnv); err != nil {
		return in, err
	}
	if pr != "" {
		if in.PR, err = github.DecodePR(pr); err != nil {
			return in, err
		}
	}
	if m.PrBodyFile != nil {
		body, err := readFile(ctx, m.PrBodyFile, fsinput.PRBody, "with-pull-request --body-file")
		if err != nil {
			return in, err
		}
		in.PRBody = body
	}
	return in, nil
}

// prNumber is a pull request number as GITHUB_COMMIT_NAME writes it ("": none).
func prNumber(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// readFile reads a small File argument, refusing one larger than the CLI
// accepts of the same kind of file.
func readFile(ctx context.Context, f *dagger.File, kind fsinput.Kind, what string) (string, error) {
	limit := int(kind.Max)
	size, err := f.Size(ctx)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	if size > limit {
		return "", fmt.Errorf("%s: %d bytes, more than the %d it can hold", what, size, limit)
	}
	return f.Contents(ctx)
}

// pullRequest reads the pull request --pr names, as JSON to keep in an
// object's field ("" without --pr); with files, its changed files too. The
// token is read here only, into the request header; it is never logged.
func (m *MilesCi) pullRequest(ctx context.Context, files bool) (string, error) {
	if m.Pr == 0 {
		return "", nil
	}
	o := github.Options{APIURL: m.GithubApiUrl, TokenFrom: "with-pr --token env:GITHUB_TOKEN"}
	if m.GithubToken != nil {
		token, err := m.GithubToken.Plaintext(ctx)
		if err != nil {
			return "", fmt.Errorf("--github-token: %w", err)
		}
		o.Token = token
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	pr, err := github.Fetch(ctx, github.Request{Repo: m.GithubRepo, Number: m.Pr, Files: files, Options: o})
	if err != nil {
		return "", err
	}
	progress("trigger facts of " + pr.Describe() + "\n")
	progress(usecase.PRHeadUnchecked(pr, "the source leaves .git out").Text + "\n")
	return pr.Encode()
}

// withExport exports what planning reads of the checkout (tests/, the
// workflows that hold the roster, release-lock.json) to a folder of the
// module runtime and runs fn there.
func withExport[T any](ctx context.Context, source *dagger.Directory, fn func(dir string) (T, error)) (T, error) {
	var zero T
	tmp, err := os.MkdirTemp("", "miles-ci-source-")
	if err != nil {
		return zero, err
	}
	defer os.RemoveAll(tmp)
	planning := source.Filter(dagger.DirectoryFilterOpts{Include: []string{"tests/", ".github/workflows/", deps.LockFileName}})
	if _, err := planning.Export(ctx, tmp); err != nil {
		return zero, fmt.Errorf("export the checkout's tests/: %w", err)
	}
	return fn(tmp)
}

// withCheckout is withExport for a source that must be a Miles checkout.
func withCheckout[T any](ctx context.Context, source *dagger.Directory, fn func(dir string) (T, error)) (T, error) {
	return withExport(ctx, source, func(dir string) (T, error) {
		if err := usecase.CheckSource(dir); err != nil {
			var zero T
			return zero, err
		}
		return fn(dir)
	})
}

// nonce is a run nonce: the run id when given, else the time, so an unnamed run is always a new one.
func nonce(runID string) string {
	if runID != "" {
		return runID
	}
	return strconv.FormatInt(time.Now().UnixNano(), 10)
}

// jsonString renders v as miles-ci's JSON output.
func jsonString(v any) (string, error) {
	out, err := encode.JSON(v)
	return string(out), err
}

// specAnswer builds a request's container spec, its notes as messages.
func specAnswer(req stagerun.Request) (*ContainerSpec, error) {
	spec, err := stagerun.Build(req)
	if err != nil {
		return nil, err
	}
	return answerOf[ContainerSpec](spec, notesOf(req.Notes))
}

// printMessages prints a use case's messages on stderr, as annotations: for
// lint, a check that returns only its error. Every other function returns
// its messages in its answer. A function that prints them is
// +cache="session": a result the engine kept from an earlier session would
// come back without its messages.
func printMessages(msgs []usecase.Message) {
	for _, m := range msgs {
		stderr.Command(ghoutput.Annotations(m.Level, m.Text))
	}
}

// stderr is the module's one way out, a function's progress on the
// engine (printable.Writer): every line passes printable.Plain, whatever
// it quotes, but the annotations of printMessages.
var stderr = printable.NewWriter(os.Stderr)

// progress prints whole lines on the function's progress, through stderr.
func progress(text string) { io.WriteString(stderr, text) }
