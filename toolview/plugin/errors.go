package plugin

import "errors"

// ErrManifest wraps every problem loading a plugin manifest.
var ErrManifest = errors.New("plugin: invalid manifest")

// ErrNoResult is returned (wrapped in a toolview.Failure with reason
// "plugin_exited") when the plugin's output ended before its result.
var ErrNoResult = errors.New("plugin: the plugin exited without a result")

// ErrRemote is returned (wrapped) when the plugin answered with a JSON-RPC
// error object.
var ErrRemote = errors.New("plugin: the plugin reported an error")

// ErrClosed is returned (wrapped in a toolview.Failure with reason
// plugin_unavailable) by a call to a persistent plugin after Close.
var ErrClosed = errors.New("plugin: closed")
