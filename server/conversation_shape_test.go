package server

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// mutexHolders are the package's types that hold a mutex, each with what
// it is one of. Exactly one of them is per conversation: conversation.
// A new type with a mutex must be added here, saying what it is one of; a
// second per-conversation state object (as runner and liveState were) is a
// defect, not an addition.
var mutexHolders = map[string]string{
	"Server":        "server",
	"modelSet":      "server", // the turnHost's model clients; the turnHost holds no lock of its own
	"metaCache":     "server",
	"artifactCache": "server",
	"forwards":      "server",
	"relayedStates": "server", // the turn, queue and approvals other replicas relayed, by conversation
	"conn":          "connection",
	"conversation":  "conversation",
}

// serverTypes parses the package's non-test files and returns its struct
// types by name.
func serverTypes(t *testing.T) map[string]*ast.StructType {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	types := map[string]*ast.StructType{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if st, ok := ts.Type.(*ast.StructType); ok {
					types[ts.Name.Name] = st
				}
			}
			return true
		})
	}
	return types
}

// mutexFields lists the mutexes a struct holds by value: its own fields
// and those of anonymous structs in it, and with types, those of the
// package's struct types it embeds or holds by value.
func mutexFields(st *ast.StructType, types map[string]*ast.StructType, seen map[*ast.StructType]bool) []string {
	if seen[st] {
		return nil
	}
	seen[st] = true
	var out []string
	for _, f := range st.Fields.List {
		names := []string{"(embedded)"}
		if len(f.Names) > 0 {
			names = names[:0]
			for _, n := range f.Names {
				names = append(names, n.Name)
			}
		}
		switch ft := f.Type.(type) {
		case *ast.SelectorExpr:
			if x, ok := ft.X.(*ast.Ident); ok && x.Name == "sync" && (ft.Sel.Name == "Mutex" || ft.Sel.Name == "RWMutex") {
				for _, n := range names {
					out = append(out, n+" sync."+ft.Sel.Name)
				}
			}
		case *ast.StructType:
			out = append(out, mutexFields(ft, types, seen)...)
		case *ast.Ident:
			if inner, ok := types[ft.Name]; ok {
				out = append(out, mutexFields(inner, types, seen)...)
			}
		}
	}
	return out
}

// TestOneStateObjectPerConversation holds the server to one state object
// per conversation with one mutex: every type that holds a mutex is known
// and is one of a server, a connection or a conversation; conversation
// holds exactly one sync.Mutex and no other lock (no second mutex for
// captures, none for the log); and every registry of mutex-holding values
// keyed by ID holds conversations or connections, so no second
// per-conversation registry (as Turns' map of runners was) comes back.
func TestOneStateObjectPerConversation(t *testing.T) {
	types := serverTypes(t)
	var holders []string
	for name, st := range types {
		own := mutexFields(st, nil, map[*ast.StructType]bool{})
		if len(own) == 0 {
			continue
		}
		holders = append(holders, name)
		of, known := mutexHolders[name]
		if !known {
			t.Errorf("type %s holds %s: a state object this test does not know; say what it is one of in mutexHolders", name, strings.Join(own, ", "))
		}
		if of != "conversation" {
			continue
		}
		// A per-conversation type: one lock, counting every struct it
		// holds by value.
		if all := mutexFields(st, types, map[*ast.StructType]bool{}); len(all) != 1 || all[0] != "mu sync.Mutex" {
			t.Errorf("type %s (one per conversation) holds the locks %s; want only mu sync.Mutex", name, strings.Join(all, ", "))
		}
	}
	var perConversation []string
	for name, of := range mutexHolders {
		if of == "conversation" {
			perConversation = append(perConversation, name)
		}
		if !slices.Contains(holders, name) {
			t.Errorf("mutexHolders lists %s, which holds no mutex (or is gone)", name)
		}
	}
	if len(perConversation) != 1 {
		t.Errorf("per-conversation state objects: %v; want exactly one", perConversation)
	}

	// Registries: map fields whose values are mutex-holding types.
	for name, st := range types {
		for _, f := range st.Fields.List {
			m, ok := f.Type.(*ast.MapType)
			if !ok {
				continue
			}
			v := m.Value
			if p, ok := v.(*ast.StarExpr); ok {
				v = p.X
			}
			id, ok := v.(*ast.Ident)
			if !ok {
				continue
			}
			if of := mutexHolders[id.Name]; slices.Contains(holders, id.Name) && of != "connection" && of != "conversation" {
				t.Errorf("%s.%s maps IDs to %s values: a registry of state objects beside the server's conversations", name, f.Names[0].Name, id.Name)
			}
			if of := mutexHolders[id.Name]; of == "conversation" && !(name == "Server" || name == "conn") {
				t.Errorf("%s.%s is a second registry of conversations (the server's is Server.convs)", name, f.Names[0].Name)
			}
		}
	}
	sort.Strings(holders)
	t.Logf("types holding a mutex: %v", holders)
}

// TestConversationHoldsOneLock checks the same of the compiled type: walking
// conversation's fields (and the structs held in it by value), exactly one
// is a sync.Mutex and none is a sync.RWMutex.
func TestConversationHoldsOneLock(t *testing.T) {
	mutex, rw := reflect.TypeFor[sync.Mutex](), reflect.TypeFor[sync.RWMutex]()
	var found []string
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, path string) {
		for i := range ty.NumField() {
			f := ty.Field(i)
			switch {
			case f.Type == mutex || f.Type == rw:
				found = append(found, path+f.Name+" "+f.Type.String())
			case f.Type.Kind() == reflect.Struct && f.Type.PkgPath() != "sync" && !strings.HasPrefix(f.Type.PkgPath(), "sync/"):
				walk(f.Type, path+f.Name+".")
			case f.Type.Kind() == reflect.Array && f.Type.Elem().Kind() == reflect.Struct:
				walk(f.Type.Elem(), path+f.Name+"[].")
			}
		}
	}
	walk(reflect.TypeFor[conversation](), "")
	if len(found) != 1 || found[0] != "mu sync.Mutex" {
		t.Fatalf("conversation's locks: %v; want exactly [mu sync.Mutex]", found)
	}
}
