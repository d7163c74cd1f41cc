// Command miles-ci answers what Miles CI runs where, without a Dagger engine.
package main

import (
	"os"

	"github.com/radixark/miles-ci/internal/cli"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], cli.Env{
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Getenv: os.Getenv,
	}))
}
