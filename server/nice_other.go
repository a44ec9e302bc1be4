//go:build !linux

package server

// lowerThreadPriority does nothing where threads have no priority of their
// own that an unprivileged process may lower.
func lowerThreadPriority() {}
