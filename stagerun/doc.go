// Package stagerun builds and drives one stage shard's container (or one
// test file's, for a single-file run): the image, environment, caches, GPUs,
// secrets and ordered steps that Miles CI's job runs (rules §9, §10,
// §11.6), and the reading of what the run leaves behind.
//
// It works in three steps, each of which a front end calls in turn:
//
//   - Build turns a Request (the stage, miles-ci's own Plan of the shard or
//     the FilePlan of one file, the image and dependency decisions of
//     package deps, the facts of the run) into a Spec: the container as plain
//     data, grouped into Phases in layer order, that `miles-ci run --dry-run`
//     prints. Build is pure: no engine, no network, no clock.
//   - Resolve runs the Spec's ResolveSteps (git ls-remote, uncached) so that
//     every moving dependency ref is keyed by its commit; Render then applies
//     the Spec to a Container up to the run phase, deciding the ROCm patch on
//     the way (rules §8). Prepare is Resolve, Build and Render in one call.
//   - Test runs the run-phase steps (the GPU wait, the in-container plan,
//     checked against miles-ci's, and the run under miles-ci's run wrapper)
//     and returns a Result: the report.Summary and the results folder, built
//     from what the engine recorded, every byte masked. A failing test is a
//     result; an error wraps ErrCannotRun.
//
// Container is the small interface the renderer and run driver are written
// against. The Dagger module (adapter.go) and the miles-ci command
// (cmd/miles-ci/engine) each adapt their Dagger SDK to it, and the tests use
// a recording fake, so every container step is tested without an engine.
//
// What stagerun must not do: import Dagger (only the adapters above do),
// decide policy (the plan, the image, the refs and the patch plan come in
// the Request from policy and deps), look up the roster (package usecase
// does that, once per run), or trust a file the tests could write: the
// verdict comes from the run wrapper's record as the engine captured it.
// The container scripts are fixed text (scripts/, embedded) whose data comes
// in as positional arguments; no step is a shell string built from input.
package stagerun
