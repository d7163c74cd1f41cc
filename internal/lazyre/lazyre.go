// Package lazyre is a regular expression compiled on its first use instead
// of at package initialization. Every miles-ci process links every package,
// and compiling a pattern with a counted repetition ({0,127}) costs more
// than a whole --help; a package-level lazyre.Regexp costs nothing until a
// command matches with it.
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is a regexp.Regexp compiled by regexp.MustCompile on first use.
type Regexp struct {
	re func() *regexp.Regexp
}

// New returns the lazily compiled expr; an invalid expr panics on first use.
func New(expr string) *Regexp {
	return &Regexp{re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })}
}

// Regexp is the compiled expression.
func (r *Regexp) Regexp() *regexp.Regexp { return r.re() }

// MatchString is regexp.(*Regexp).MatchString.
func (r *Regexp) MatchString(s string) bool { return r.re().MatchString(s) }

// FindStringSubmatch is regexp.(*Regexp).FindStringSubmatch.
func (r *Regexp) FindStringSubmatch(s string) []string { return r.re().FindStringSubmatch(s) }

// FindAllStringSubmatch is regexp.(*Regexp).FindAllStringSubmatch.
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.re().FindAllStringSubmatch(s, n)
}
