package server

import "syscall"

// lowerThreadPriority lowers the scheduling priority of the calling OS
// thread (Linux keeps a nice value per thread). The caller has locked its
// goroutine to the thread and never unlocks it, so the thread ends with
// the goroutine and no other goroutine runs at the lowered priority.
func lowerThreadPriority() {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), loadNice)
}
