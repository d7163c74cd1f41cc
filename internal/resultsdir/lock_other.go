//go:build !unix

package resultsdir

// Lock takes no lock where flock is missing.
func Lock(dir string) (unlock func(), err error) { return func() {}, nil }
