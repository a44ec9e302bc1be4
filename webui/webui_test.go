package webui_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/foliodev/folio/web"
	"github.com/foliodev/folio/webui"
)

func get(t *testing.T, h http.Handler, method, target string) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEmbeddedAppIsComplete checks the real embedded build: the entry page
// mounts #root, and every asset it references is embedded and served.
func TestEmbeddedAppIsComplete(t *testing.T) {
	t.Parallel()
	h := webui.Handler()
	res := get(t, h, http.MethodGet, "/")
	page := body(t, res)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `<div id="root">`) {
		t.Fatalf("GET / = %d, page without #root:\n%s", res.StatusCode, page)
	}
	refs := regexp.MustCompile(`(?:src|href)="\./(assets/[^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(refs) < 2 {
		t.Fatalf("index.html references %d assets, want the script and the stylesheet:\n%s", len(refs), page)
	}
	for _, ref := range refs {
		if _, err := fs.Stat(web.Dist(), ref[1]); err != nil {
			t.Errorf("index.html references %s, which is not embedded: %v", ref[1], err)
		}
		res := get(t, h, http.MethodGet, "/"+ref[1])
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET /%s = %d", ref[1], res.StatusCode)
		}
	}
}

func TestHandler(t *testing.T) {
	t.Parallel()
	app := fstest.MapFS{
		"index.html":          {Data: []byte("<html>app</html>")},
		"assets/index-abc.js": {Data: []byte("console.log(1)")},
		"favicon.svg":         {Data: []byte("<svg/>")},
	}
	h := webui.NewHandler(app)
	tests := []struct {
		name, method, path string
		status             int
		body, cache, ctype string
	}{
		{"entry page", "GET", "/", 200, "<html>app</html>", "no-cache", "text/html; charset=utf-8"},
		{"index by name", "GET", "/index.html", 200, "<html>app</html>", "no-cache", "text/html; charset=utf-8"},
		{"client route", "GET", "/c/123/branch", 200, "<html>app</html>", "no-cache", "text/html; charset=utf-8"},
		{"conversation route", "GET", "/c/20260101-abc", 200, "<html>app</html>", "no-cache", "text/html; charset=utf-8"},
		{"conversation route with a dot", "GET", "/c/conv.v2", 200, "<html>app</html>", "no-cache", "text/html; charset=utf-8"},
		{"asset asked for from a conversation route", "GET", "/c/assets/index-abc.js", 200, "console.log(1)", "public, max-age=31536000, immutable", "text/javascript; charset=utf-8"},
		{"root file from a conversation route", "GET", "/c/favicon.svg", 200, "<svg/>", "no-cache", "image/svg+xml"},
		{"hashed asset", "GET", "/assets/index-abc.js", 200, "console.log(1)", "public, max-age=31536000, immutable", "text/javascript; charset=utf-8"},
		{"missing asset is not cached", "GET", "/assets/gone-123.js", 404, "", "-", ""},
		{"missing file", "GET", "/robots.txt", 404, "", "", ""},
		{"root file", "GET", "/favicon.svg", 200, "<svg/>", "no-cache", "image/svg+xml"},
		{"dot-dot stays inside", "GET", "/assets/../../secret.txt", 404, "", "", ""},
		{"head", "HEAD", "/", 200, "", "no-cache", "text/html; charset=utf-8"},
		{"post", "POST", "/", 405, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := get(t, h, tt.method, tt.path)
			got := body(t, res)
			if res.StatusCode != tt.status {
				t.Fatalf("%s %s = %d, want %d (%q)", tt.method, tt.path, res.StatusCode, tt.status, got)
			}
			if tt.status == 200 && got != tt.body {
				t.Errorf("body = %q, want %q", got, tt.body)
			}
			if c := res.Header.Get("Cache-Control"); tt.cache == "-" && c != "" {
				t.Errorf("Cache-Control = %q, want none", c)
			} else if tt.cache != "" && tt.cache != "-" && c != tt.cache {
				t.Errorf("Cache-Control = %q, want %q", c, tt.cache)
			}
			if c := res.Header.Get("Content-Type"); tt.ctype != "" && c != tt.ctype {
				t.Errorf("Content-Type = %q, want %q", c, tt.ctype)
			}
			if tt.status != 405 && res.Header.Get("Content-Security-Policy") != webui.ContentSecurityPolicy {
				t.Errorf("missing Content-Security-Policy")
			}
		})
	}
}

func TestHandlerWithoutBuild(t *testing.T) {
	t.Parallel()
	res := get(t, webui.NewHandler(fstest.MapFS{}), http.MethodGet, "/")
	if res.StatusCode != http.StatusInternalServerError || !strings.Contains(body(t, res), "not built") {
		t.Fatalf("GET / without index.html = %d, want 500 saying the app is not built", res.StatusCode)
	}
}
