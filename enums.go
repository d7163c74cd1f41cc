package main

import (
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/usecase"
)

// Dagger lists these enums' members in `dagger call ... --help` and refuses
// any other value before a function runs. Dagger v0.21.8 names a member after
// its Go constant without the type's prefix, in upper case (CadenceNightly is
// NIGHTLY, EventPullRequest is PULL_REQUEST), accepts a member name in any
// case on the command line (so the CLI's spellings, --cadence nightly and
// --event pull_request, work unchanged), and hands the function the
// constant's value: the spelling the rules use.

// Cadence is a CI cadence (rules §2).
type Cadence string

const (
	// Every pull request and push: the default.
	CadenceRegular Cadence = Cadence(policy.Regular)
	// The nightly schedule: nightly=True tests too.
	CadenceNightly Cadence = Cadence(policy.Nightly)
	// The weekly schedule.
	CadenceWeekly Cadence = Cadence(policy.Weekly)
	// A release run.
	CadenceRelease Cadence = Cadence(policy.Release)
)

// Backend is a hardware backend, run_suite.py's --hw.
type Backend string

const (
	// CPU suites.
	BackendCpu Backend = Backend(policy.CPU)
	// NVIDIA GPU suites.
	BackendCuda Backend = Backend(policy.CUDA)
	// AMD GPU suites.
	BackendRocm Backend = Backend(policy.ROCM)
)

// Event is the GitHub event whose trigger facts decide a run's policy (rules §3).
type Event string

const (
	// A pull request: its labels, and its diff prunes GPU stages.
	EventPullRequest Event = Event(policy.EventPullRequest)
	// A scheduled run: its cron decides the cadence.
	EventSchedule Event = Event(policy.EventSchedule)
	// A manual dispatch.
	EventWorkflowDispatch Event = Event(policy.EventWorkflowDispatch)
)

// Planner is who answers plan and policy.
// It is miles-ci's rules or the checkout's own tests/ci code.
type Planner string

const (
	// miles-ci's own rules, no Python: the default.
	PlannerMilesCi Planner = Planner(usecase.PlannerMilesCI)
	// The checkout's own tests/ci code, run in a Python 3.11 container.
	PlannerCheckout Planner = Planner(usecase.PlannerCheckout)
)
