//go:build !linux

package proc

import "syscall"

// parentDeath does nothing where the kernel has no parent-death signal.
func parentDeath(*syscall.SysProcAttr) {}
