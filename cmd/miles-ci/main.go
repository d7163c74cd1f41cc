// Command miles-ci answers what Miles CI runs where, without a Dagger engine.
package main

import (
	"os"
	"runtime/debug"

	"github.com/radixark/miles-ci/cmd/miles-ci/cli"
)

func main() {
	// A plan is a short-lived process that reads a few MB: collecting garbage
	// less often saves more time than the extra memory costs.
	debug.SetGCPercent(400)
	os.Exit(cli.Run(os.Args[1:], cli.Env{
		Stdout:    os.Stdout,
		Stderr:    os.Stderr,
		Getenv:    os.Getenv,
		LookupEnv: os.LookupEnv,
	}))
}
