package proc

import "syscall"

// parentDeath asks the kernel to kill the process when folio dies. The
// kernel ties this to the thread that started the process; Go ends threads
// only under LockOSThread, which nothing in folio uses.
func parentDeath(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
