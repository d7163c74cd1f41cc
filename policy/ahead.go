package policy

import "fmt"

// AheadError is a checkout that declares something no rule set of miles-ci
// covers (rules §11.7): a registration keyword the checkout's own
// _VALID_KWARGS accepts but miles-ci does not know, or a table in a form
// miles-ci cannot read. It is miles-ci lagging the checkout, not a broken
// test: callers say so, point at --planner checkout, and a stage run falls
// back to the container's own plan instead of failing.
type AheadError struct {
	// File is the repo-relative file that holds the construct.
	File string
	// Line is its 1-based line, or 0.
	Line int
	// Construct is what miles-ci does not know, as the message quotes it:
	// a keyword such as 'num_gpus', or a table and what is wrong with it.
	Construct string
	// Detail says where the checkout declares it, or "".
	Detail string
	// Err is the reading fault behind it (a *TableError), or nil.
	Err error
}

// aheadWayOut is how a user gets an answer all the same.
const aheadWayOut = "plan with --planner checkout (the checkout's own tests/ci code), or update miles-ci"

func (e *AheadError) Error() string {
	if e.Err != nil {
		return e.Err.Error() + "; this checkout's CI is ahead of miles-ci: " + aheadWayOut
	}
	msg := fmt.Sprintf("this checkout's CI accepts %s, which miles-ci does not know yet; %s", e.Construct, aheadWayOut)
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg
}

func (e *AheadError) Unwrap() error { return e.Err }
