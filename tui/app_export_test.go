package tui

import (
	"testing"
	"testing/synctest"
)

// /export asks the host for text, /export html for HTML, and a format the
// chat does not write is refused with a status line, the host not asked.
func TestAppExportFormats(t *testing.T) {
	for _, tc := range []struct {
		cmd, want, status string
	}{
		{"/export", "text", "exported to out.text"},
		{"/export html", "html", "exported to out.html"},
		{"/export pdf", "", "/export writes text or html, not pdf"},
	} {
		synctest.Test(t, func(t *testing.T) {
			var asked []string
			o := Options{Theme: PlainTheme, Export: func(format string) (string, error) {
				asked = append(asked, format)
				return "out." + format, nil
			}}
			r := newChatRig(t, o, 80, 20, demoProvider())
			r.typeText(tc.cmd)
			r.enter()
			r.catchUp()
			if tc.want == "" && len(asked) != 0 || tc.want != "" && (len(asked) != 1 || asked[0] != tc.want) {
				t.Errorf("%s: the host was asked for %q", tc.cmd, asked)
			}
			if r.app.status != tc.status {
				t.Errorf("%s: status %q, want %q", tc.cmd, r.app.status, tc.status)
			}
		})
	}
}
