package webui

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// version is a major.minor Node version.
type version struct{ major, minor int }

func (v version) less(w version) bool {
	return v.major < w.major || v.major == w.major && v.minor < w.minor
}

var rangeStart = regexp.MustCompile(`^\s*(?:>=|\^|~)?\s*v?(\d+)(?:\.(\d+))?`)

// lowest is the oldest Node an engines range such as
// "^20.19.0 || >=22.12.0" accepts: the smallest start among its
// alternatives.
func lowest(r string) (version, bool) {
	var best version
	found := false
	for _, alt := range strings.Split(r, "||") {
		m := rangeStart.FindStringSubmatch(alt)
		if m == nil {
			continue
		}
		v := version{}
		v.major, _ = strconv.Atoi(m[1])
		v.minor, _ = strconv.Atoi(m[2])
		if !found || v.less(best) {
			best, found = v, true
		}
	}
	return best, found
}

// The README names the Node version the web app needs; it must be one
// every locked dependency says it supports, or npm ci warns on it.
func TestReadmeNodeVersionSatisfiesTheLock(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../web/package-lock.json")
	if err != nil {
		t.Fatal(err)
	}
	var lock struct {
		Packages map[string]struct {
			Engines json.RawMessage `json:"engines"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(b, &lock); err != nil {
		t.Fatal(err)
	}
	var need version
	needBy := ""
	for name, p := range lock.Packages {
		var eng struct {
			Node string `json:"node"`
		}
		// Some old packages list engines as an array; they name no Node.
		if json.Unmarshal(p.Engines, &eng) != nil || eng.Node == "" {
			continue
		}
		if v, ok := lowest(eng.Node); ok && need.less(v) {
			need, needBy = v, name
		}
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Node (\d+)\.(\d+)\+`).FindSubmatch(readme)
	if m == nil {
		t.Fatal(`README.md names no Node version as "Node X.Y+"`)
	}
	var said version
	said.major, _ = strconv.Atoi(string(m[1]))
	said.minor, _ = strconv.Atoi(string(m[2]))
	if said.less(need) {
		t.Fatalf("README.md says Node %d.%d+, but %s needs %d.%d", said.major, said.minor, needBy, need.major, need.minor)
	}
}
