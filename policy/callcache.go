package policy

import (
	"crypto/sha256"
	"sync/atomic"

	"github.com/radixark/miles-ci/policy/pysource"
)

// CallCache keeps the top-level registration calls of test files between
// scans, by the SHA-256 of each file's text, so that a scan parses only the
// files that changed (policy/callcache keeps them in the user's cache
// folder for the CLI). It keeps what parsing gives and nothing else: the
// registrations are made from the calls under each scan's own tables.
type CallCache interface {
	// Calls returns the calls kept for a text with this hash; the scan
	// does not change them.
	Calls(sum [sha256.Size]byte) ([]pysource.Call, bool)
	// Keep records the calls of a text with this hash; they point into
	// no buffer the scan reuses.
	Keep(sum [sha256.Size]byte, calls []pysource.Call)
	// Done ends the scan.
	Done()
}

// callCacheFor opens the cache of a checkout's folder for one scan; nil, the
// default, keeps no calls.
var callCacheFor atomic.Pointer[func(root string) CallCache]

// UseCallCache makes every later scan of a checkout's test files use the
// cache open returns for the checkout's folder; nil uses none. The CLI calls
// it once at start; the Dagger module and the tests keep the default.
func UseCallCache(open func(root string) CallCache) {
	if open == nil {
		callCacheFor.Store(nil)
		return
	}
	callCacheFor.Store(&open)
}

// openCallCache is the cache of the checkout at root for one scan, or nil.
func openCallCache(root string) CallCache {
	if open := callCacheFor.Load(); open != nil {
		return (*open)(root)
	}
	return nil
}
