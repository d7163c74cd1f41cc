// Package dang stands in for github.com/vito/dang/v2, which the Go module proxy
// does not serve. The engine build serves Dang modules with the v1 implementation,
// so this module only has to exist for the module graph.
package dang
