// Command miles-ci answers what Miles CI runs where, without a Dagger engine.
package main

import (
	"os"
	"runtime/debug"

	"github.com/radixark/miles-ci/cmd/miles-ci/cli"
	"github.com/radixark/miles-ci/policy"
	"github.com/radixark/miles-ci/policy/callcache"
)

func main() {
	// A plan is a short-lived process that reads a few MB: collecting garbage
	// less often saves more time than the extra memory costs.
	debug.SetGCPercent(400)
	// Parsing the test files is most of a plan's cost: a file unchanged since
	// the last run is read (to know it is) but not parsed again.
	if open := callcache.Opener(os.Getenv); open != nil {
		policy.UseCallCache(func(root string) policy.CallCache { return open(root) })
	}
	os.Exit(cli.Run(os.Args[1:], cli.Env{
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Getenv: os.Getenv,
	}))
}
