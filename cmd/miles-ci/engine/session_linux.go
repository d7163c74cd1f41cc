package engine

import "syscall"

// sessionAttr starts a dagger session in a session of its own, killed
// when miles-ci dies (even by SIGKILL, when its stdin would close too late
// for a session still connecting).
func sessionAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}
