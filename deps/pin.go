package deps

import (
	"fmt"
	"strings"

	"github.com/radixark/miles-ci/internal/lazyre"
)

// pinPattern is the grammar Miles' comment gateway enforces for a dependency
// pin: a PR number (#N) or a ref-like word.
var pinPattern = lazyre.New(`^(#[0-9]+|[A-Za-z0-9_][A-Za-z0-9_./-]*)$`)

// prNumberPin matches the #N form that fetches refs/pull/N/head.
var prNumberPin = lazyre.New(`^#([0-9]+)$`)

// CheckPin reports why value cannot be passed to git fetch as a dependency
// ref, or returns nil when it can. The reason is a short lowercase phrase.
func CheckPin(value string) error {
	if value == "" {
		return fmt.Errorf("is empty")
	}
	if strings.HasPrefix(value, "-") {
		return fmt.Errorf("starts with '-', which git would read as an option")
	}
	if !pinPattern.MatchString(value) {
		return fmt.Errorf("is neither #N nor a branch, tag or commit made of A-Z a-z 0-9 _ . / -")
	}
	if prNumberPin.MatchString(value) {
		return nil
	}
	switch {
	case strings.Contains(value, ".."):
		return fmt.Errorf("contains '..', which git does not allow in a ref name")
	case strings.Contains(value, "//"):
		return fmt.Errorf("contains '//', which git does not allow in a ref name")
	case strings.Contains(value, "@{"):
		return fmt.Errorf("contains '@{', which git does not allow in a ref name")
	case strings.HasSuffix(value, "/"):
		return fmt.Errorf("ends with '/', which git does not allow in a ref name")
	case strings.HasSuffix(value, "."):
		return fmt.Errorf("ends with '.', which git does not allow in a ref name")
	}
	for _, component := range strings.Split(value, "/") {
		if strings.HasPrefix(component, ".") {
			return fmt.Errorf("has a path component starting with '.', which git does not allow in a ref name")
		}
		if strings.HasSuffix(component, ".lock") {
			return fmt.Errorf("has a path component ending in '.lock', which git does not allow in a ref name")
		}
	}
	return nil
}

// FetchRef turns a validated pin into what git fetch is given: #N becomes
// refs/pull/N/head, anything else is fetched as is.
func FetchRef(pin string) string {
	if m := prNumberPin.FindStringSubmatch(pin); m != nil {
		return "refs/pull/" + m[1] + "/head"
	}
	return pin
}
