//go:build !linux

package engine

import "syscall"

// sessionAttr starts a dagger session in a session of its own.
func sessionAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}
