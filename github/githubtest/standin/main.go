// Command standin serves recorded GitHub API answers on a loopback port, so
// `miles-ci ... --pr N` can be tried without the network:
//
//	go run ./github/githubtest/standin testdata/github
//
// prints GITHUB_API_URL=http://127.0.0.1:PORT/ and serves until interrupted.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/radixark/miles-ci/github/githubtest"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: standin DIR (recorded answers, e.g. testdata/github)")
		os.Exit(2)
	}
	if st, err := os.Stat(os.Args[1]); err != nil || !st.IsDir() {
		fmt.Fprintf(os.Stderr, "standin: %s is not a folder of recorded answers\n", os.Args[1])
		os.Exit(2)
	}
	s := githubtest.Start(os.Args[1])
	defer s.Close()
	fmt.Printf("GITHUB_API_URL=%s\n", s.URL)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	<-stop
}
