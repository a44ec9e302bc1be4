package pager

// ForceGraph resolves graph annotations even when no captured entry needs
// them. Pages must come out identical either way; the tests use it to
// prove that skipping the work loses nothing.
func ForceGraph() Option { return func(o *buildOptions) { o.forceGraph = true } }
