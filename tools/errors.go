package tools

import "errors"

// ErrOutsideRoot is returned by the file tools when a path leaves the
// workspace root through "..".
var ErrOutsideRoot = errors.New("path is outside the workspace")

// ErrNoMatch is returned by edit_file when the text to replace is not in the
// file.
var ErrNoMatch = errors.New("the text to replace was not found")

// ErrAmbiguous is returned by edit_file when the text to replace occurs more
// than once and replace_all was not set.
var ErrAmbiguous = errors.New("the text to replace occurs more than once")

// ErrNoSpawner is returned by the task tool when no engine was wired in to
// run child agents.
var ErrNoSpawner = errors.New("task: no child agent runner configured")
