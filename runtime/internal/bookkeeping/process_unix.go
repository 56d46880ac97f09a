//go:build unix

package bookkeeping

import (
	"errors"
	"syscall"
)

// processGone reports whether no process of this machine has pid.
func processGone(pid int) bool {
	return pid > 0 && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
