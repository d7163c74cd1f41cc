// Command standin serves recorded GitHub API answers, so
// `miles-ci ... --pr N` can be tried without the network:
//
//	go run ./github/githubtest/standin testdata/github
//	go run ./github/githubtest/standin -listen 10.87.0.1:0 testdata/github
//
// prints GITHUB_API_URL=http://ADDR:PORT/, logs each request on stderr
// (with whether it carried a token, never the token) and serves until interrupted. It
// listens on loopback unless -listen names another address (one the
// containers of a Dagger engine reach, for the module's --github-api-url).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/radixark/miles-ci/github/githubtest"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "the address to listen on, host:port (port 0: any free one)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: standin [-listen HOST:PORT] DIR (recorded answers, e.g. testdata/github)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	dir := flag.Arg(0)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		fmt.Fprintf(os.Stderr, "standin: %s is not a folder of recorded answers\n", dir)
		os.Exit(2)
	}
	s, err := githubtest.StartOn(dir, *listen)
	if err != nil {
		fmt.Fprintf(os.Stderr, "standin: -listen %s: %v\n", *listen, err)
		os.Exit(2)
	}
	defer s.Close()
	s.SetLog(os.Stderr)
	fmt.Printf("GITHUB_API_URL=%s\n", s.URL)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	<-stop
}
