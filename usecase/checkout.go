package usecase

import "github.com/radixark/miles-ci/checkoutpy"

// Planner names who answers plan, policy, explain and file-plan: miles-ci
// itself (rules §1-§11, in Go) or the checkout's own tests/ci code.
type Planner string

// The planners.
const (
	// PlannerMilesCI is miles-ci's own planner (the default).
	PlannerMilesCI Planner = "miles-ci"
	// PlannerCheckout runs the checkout's own run_suite.py --list-only,
	// python -m tests.ci.ci_policy and python -m tests.ci.file_run.
	PlannerCheckout Planner = "checkout"
)

// The checkout planner (package checkoutpy) as the requests that take one
// name it: both front ends open a checkout through these, so neither needs
// checkoutpy itself.
type (
	// Checkout runs a Miles checkout's own tests/ci code (checkoutpy.Checkout).
	Checkout = checkoutpy.Checkout
	// Interpreter runs the checkout driver (checkoutpy.Interpreter).
	Interpreter = checkoutpy.Interpreter
)

// MinPython is the oldest Python the checkout planner runs.
const MinPython = checkoutpy.MinPython

var (
	// NewCheckout opens a checkout with a local interpreter (checkoutpy.NewCheckout).
	NewCheckout = checkoutpy.NewCheckout
	// OpenCheckout opens a checkout with the interpreter given (checkoutpy.OpenCheckout).
	OpenCheckout = checkoutpy.OpenCheckout
	// DriverEnv is the driver's environment (checkoutpy.DriverEnv).
	DriverEnv = checkoutpy.DriverEnv
)
