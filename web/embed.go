// Package web holds folio's browser app: its React + TypeScript sources live
// beside this file and are built with Vite into dist/, which is committed and
// embedded here. The embed directive has to sit in this folder because
// go:embed cannot reach a parent directory; package webui is the API the rest
// of folio uses to serve the app. Everything here is read-only after init and
// safe for concurrent use.
package web

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// Dist returns the built app: index.html at its root and hashed files under
// assets/.
func Dist() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		// fs.Sub fails only for an invalid path, and "dist" is valid.
		panic(err)
	}
	return sub
}
