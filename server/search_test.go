package server

import (
	"net/http"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/search"
)

// TestSearchFindsAndOpensAtTheHit: GET /api/v2/search finds an entry deep
// in a generated conversation, and a page around that entry (what the web
// app's /c/{id}?at={entry} reads) holds it.
func TestSearchFindsAndOpensAtTheHit(t *testing.T) {
	ts := newTestServer(t, Options{})
	ts.writeGen(t, "deep", 3000, 5)
	ts.writeGen(t, "other", 200, 6)
	var ans searchAnswer
	getJSON(t, ts.url+"/api/v2/search?q="+url.QueryEscape(`fsync role:prompt conversation:deep`)+"&limit=50", &ans)
	if len(ans.Hits) == 0 {
		t.Fatal("no hits")
	}
	for _, h := range ans.Hits {
		if h.Conversation != "deep" || h.Role != search.RolePrompt || !strings.Contains(strings.ToLower(h.SnippetText("[", "]")), "[fsync]") {
			t.Fatalf("hit %+v", h)
		}
	}
	hit := ans.Hits[len(ans.Hits)-1]
	c := ts.dial(t)
	snap := c.open("deep")
	p := c.page(snap.Token, "deep", hit.Entry, "around", 64<<10)
	if p.Type != "page" || !strings.Contains(string(p.Groups), `"id":"`+hit.Entry+`"`) {
		t.Fatalf("the page around %s does not hold it: %s", hit.Entry, p.raw)
	}
}

func TestSearchRefusesMalformedQueries(t *testing.T) {
	ts := newTestServer(t, Options{})
	for q, want := range map[string]string{
		`"open`:      "quote is not closed",
		`x colour:y`: `unknown filter`,
		``:           "nothing to search for",
	} {
		resp, err := http.Get(ts.url + "/api/v2/search?q=" + url.QueryEscape(q))
		if err != nil {
			t.Fatal(err)
		}
		var e apiError
		json.UnmarshalRead(resp.Body, &e)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || e.Error.Code != "bad-query" || !strings.Contains(e.Error.Message, want) {
			t.Errorf("%q: %d %+v, want 400 bad-query saying %q", q, resp.StatusCode, e, want)
		}
	}
	resp, err := http.Get(ts.url + "/api/v2/search?q=x&limit=1000")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("limit 1000: %d", resp.StatusCode)
	}
}

// TestSearchSchemaMatchesTheAnswer keeps the schema's search definitions
// equal to the Go types the server encodes.
func TestSearchSchemaMatchesTheAnswer(t *testing.T) {
	raw, err := os.ReadFile("../docs/schema/protocol.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Defs map[string]struct {
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &schema, json.RejectUnknownMembers(false)); err != nil {
		t.Fatal(err)
	}
	for def, typ := range map[string]reflect.Type{
		"searchAnswer": reflect.TypeFor[searchAnswer](),
		"searchHit":    reflect.TypeFor[search.Hit](),
		"snippetSpan":  reflect.TypeFor[search.Span](),
	} {
		var want, got []string
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			want = append(want, name)
		}
		for name := range schema.Defs[def].Properties {
			got = append(got, name)
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: schema %v, Go %v", def, got, want)
		}
	}
	roles := schema.Defs["searchHit"].Properties["role"].Enum
	for _, r := range []string{search.RolePrompt, search.RoleAnswer, search.RoleReasoning, search.RoleTool, search.RoleNotice, search.RoleFailure, search.RoleSummary, search.RoleTitle} {
		if !slices.Contains(roles, r) {
			t.Errorf("role %q is not in the schema", r)
		}
	}
}

// TestSearchNewestOrder: order=newest lists one conversation's matches
// newest first (what the web app steps through), and an unknown order is
// refused.
func TestSearchNewestOrder(t *testing.T) {
	ts := newTestServer(t, Options{})
	ts.writeGen(t, "deep", 3000, 5)
	var ranked, newest searchAnswer
	q := url.QueryEscape(`fsync role:prompt conversation:deep`)
	getJSON(t, ts.url+"/api/v2/search?q="+q+"&limit=200", &ranked)
	getJSON(t, ts.url+"/api/v2/search?q="+q+"&limit=200&order=newest", &newest)
	if len(newest.Hits) != len(ranked.Hits) || len(newest.Hits) < 3 {
		t.Fatalf("%d hits newest first, %d ranked", len(newest.Hits), len(ranked.Hits))
	}
	for i := 1; i < len(newest.Hits); i++ {
		if newest.Hits[i].At.After(newest.Hits[i-1].At) {
			t.Fatalf("hit %d (%s) is newer than hit %d (%s)", i, newest.Hits[i].At, i-1, newest.Hits[i-1].At)
		}
	}
	// A find may ask for up to search.MaxFind hits; a ranked search for
	// search.MaxLimit.
	for _, c := range []struct {
		query string
		code  int
	}{
		{"&order=sideways", http.StatusBadRequest},
		{"&order=newest&limit=" + strconv.Itoa(search.MaxFind), http.StatusOK},
		{"&order=newest&limit=" + strconv.Itoa(search.MaxFind+1), http.StatusBadRequest},
		{"&limit=" + strconv.Itoa(search.MaxLimit+1), http.StatusBadRequest},
	} {
		resp, err := http.Get(ts.url + "/api/v2/search?q=x" + c.query)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.code {
			t.Errorf("%s: %d, want %d", c.query, resp.StatusCode, c.code)
		}
	}
}
