// Package webui serves folio's web app, the Vite build embedded by package
// web, over HTTP. It owns the app's static responses: the entry page, the
// content-hashed assets, the fallback that lets client-side routes load the
// entry page, and the security headers the page relies on. The handler keeps
// no state and is safe for concurrent use.
package webui

import (
	"errors"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/foliodev/folio/web"
)

// contentSecurityPolicy is sent with every response. Markdown is sanitized
// before it reaches the page; this is the second line: no inline or foreign
// script, no plugins, no framing. Inline styles stay allowed because KaTeX
// positions glyphs with style attributes.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; " +
	"base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

// Handler serves the embedded app.
func Handler() http.Handler { return NewHandler(web.Dist()) }

// NewHandler serves the app in fsys, which must hold index.html at its root.
// Paths under assets/ are immutable (their names carry a content hash) and may
// be cached for a year; a missing asset is a 404. Any other path without a
// file extension is a client-side route and gets index.html, never cached, so
// a new build is picked up on the next load.
func NewHandler(fsys fs.FS) http.Handler {
	files := http.FileServerFS(fsys)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")

		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		// The app's conversation route is c/{id}. The page links its files
		// relatively ("./assets/…", "./favicon.svg"), so on that route the
		// browser asks for c/assets/… or c/favicon.svg: those are served as
		// the root's files. Any other c/{id} is the route itself and gets
		// the page, even when the ID has a dot in it.
		// A share link, s/{token}, is the same: its page and the root's files.
		for _, prefix := range []string{routePrefix, sharePrefix} {
			if rest, ok := strings.CutPrefix(name, prefix); ok && rest != "" {
				if _, err := fs.Stat(fsys, rest); err == nil || strings.Contains(rest, "/") {
					name = rest
				} else {
					serveIndex(w, r, fsys)
					return
				}
				break
			}
		}
		if strings.HasPrefix(name, "assets/") {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
			serveFile(w, r, files, name)
			return
		}
		if name != "" && name != "index.html" && path.Ext(name) != "" {
			if _, err := fs.Stat(fsys, name); err == nil {
				h.Set("Cache-Control", "no-cache")
				serveFile(w, r, files, name)
				return
			}
			http.NotFound(w, r)
			return
		}
		serveIndex(w, r, fsys)
	})
}

// routePrefix starts the app's client-side conversation routes, c/{id}.
const routePrefix = "c/"

// sharePrefix starts a share link's address, s/{token} (server/shares.go).
const sharePrefix = "s/"

// serveFile serves the file name of the app, whatever path asked for it.
func serveFile(w http.ResponseWriter, r *http.Request, files http.Handler, name string) {
	if r.URL.Path != "/"+name {
		r = r.Clone(r.Context())
		r.URL.Path = "/" + name
	}
	files.ServeHTTP(w, r)
}

func serveIndex(w http.ResponseWriter, r *http.Request, fsys fs.FS) {
	page, err := fs.ReadFile(fsys, "index.html")
	if errors.Is(err, fs.ErrNotExist) {
		http.Error(w, "the web app is not built (web/dist/index.html is missing)", http.StatusInternalServerError)
		return
	}
	if err != nil {
		http.Error(w, "reading the web app: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(page)
}
