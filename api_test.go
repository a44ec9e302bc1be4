package folio_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// apiPackages lists the packages whose exported names TestExportedNamesHaveCallers
// holds to the rule "a caller outside the package, or an example". A package
// with check false is only reported (go test -run ExportedNames -v), so
// enabling one is a one-word change once its list is empty. Left out: main
// packages (cmd/folio, examples/…, webui/internal/devserve) and
// provider/builtin, which exports nothing and is imported for its side
// effect.
//
// Packages under internal/ are not public API (nothing outside the module
// can import them), so the rule does not bind them; internal/cli and
// internal/gen are listed to report what only their own tests use.
//
// A package with support true exists for other packages' tests (like
// net/http/httptest): their test files are its callers.
var apiPackages = []struct {
	dir     string
	check   bool
	support bool
}{
	{dir: "message", check: true},
	{dir: "receipt", check: true},
	{dir: "transcript", check: true},
	{dir: "toolview", check: true},
	{dir: "toolview/plugin", check: true},
	{dir: "mcp/mcpschema", check: true},
	{dir: "mcp", check: true},
	{dir: "tools", check: true},
	{dir: "tools/toolschema", check: true},
	{dir: "internal/proc", check: true},
	{dir: "provider", check: true},
	{dir: "provider/anthropic", check: true},
	{dir: "provider/openai", check: true},
	{dir: "provider/demo", check: true},
	{dir: "provider/providertest", check: true, support: true},

	{dir: "engine", check: true},
	{dir: "history", check: true},
	{dir: "history/storetest", check: true, support: true},
	{dir: "server", check: true},
	{dir: "server/pager", check: true},
	{dir: "store/pgstore", check: true},
	{dir: "tui", check: true},
	{dir: "webui", check: true},
	{dir: "search", check: true},
	{dir: "history/export", check: true},
	{dir: "internal/cli", check: false},
	{dir: "internal/gen", check: false},
	{dir: "store/pgstore/pgtest", check: true, support: true},
}

// TestExportedNamesHaveCallers fails when a package-level exported name (func,
// type, var or const) of a checked package is referenced neither from a
// non-test file of another package nor from an Example function (in any
// package, its own included). A name only tests use belongs unexported or in
// export_test.go; a name nothing uses does not belong at all.
//
// A name a used name's signature shows counts as used too: the result type of
// a called constructor, the types of an exported field or method of a used
// type, the option type a used option returns. So do the constants of a used
// named type (the values of an enum a caller receives), and the sentinel
// errors (vars named Err… made by errors.New) of a package with any used
// name: they are the error contract of the functions that return them, which
// a caller tells apart with errors.Is.
//
// Methods and struct fields are not checked: telling which type a selector
// belongs to needs type checking, and an exported method is usually there to
// satisfy an interface.
func TestExportedNamesHaveCallers(t *testing.T) {
	mod := readModulePath(t)
	files := parseModule(t)

	// The package name each directory declares, from its non-test files.
	pkgName := map[string]string{}
	for _, f := range files {
		if !f.test {
			pkgName[f.dir] = f.ast.Name.Name
		}
	}

	// used[importPath][name] is true once a counting reference is seen.
	used := map[string]map[string]bool{}
	mark := func(imp, name string) {
		if used[imp] == nil {
			used[imp] = map[string]bool{}
		}
		used[imp][name] = true
	}
	support := map[string]bool{}
	for _, p := range apiPackages {
		support[mod+"/"+p.dir] = p.support
	}
	for _, f := range files {
		own := mod + "/" + filepath.ToSlash(f.dir)
		locals := importLocals(mod, f.ast, pkgName)
		// A file of the package itself counts only inside its Example
		// functions, where names appear bare.
		inOwnPackage := f.ast.Name.Name == pkgName[f.dir]
		for _, decl := range f.ast.Decls {
			fn, isFunc := decl.(*ast.FuncDecl)
			example := isFunc && strings.HasPrefix(fn.Name.Name, "Example")
			ast.Inspect(decl, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if id, ok := n.X.(*ast.Ident); ok {
						if imp, ok := locals[id.Name]; ok && (!f.test || example || support[imp] && imp != own) {
							mark(imp, n.Sel.Name)
						}
					}
				case *ast.Ident:
					if example && inOwnPackage {
						mark(own, n.Name)
					}
				}
				return true
			})
		}
	}

	closeOverSignatures(mod, files, pkgName, used, mark)
	sentinels := sentinelErrors(mod, files)

	for _, p := range apiPackages {
		imp := mod + "/" + p.dir
		var unused []string
		for _, name := range exportedNames(files, filepath.FromSlash(p.dir)) {
			if sentinels[imp][name] && len(used[imp]) > 0 {
				continue
			}
			if !used[imp][name] {
				unused = append(unused, name)
			}
		}
		if len(exportedNames(files, filepath.FromSlash(p.dir))) == 0 {
			t.Errorf("%s: no exported names found; is the directory right?", p.dir)
			continue
		}
		if len(unused) == 0 {
			continue
		}
		if p.check {
			t.Errorf("%s: exported names with no caller outside the package and no example: %s", p.dir, strings.Join(unused, ", "))
		} else {
			t.Logf("%s (not checked yet): %d exported names with no caller outside the package and no example: %s", p.dir, len(unused), strings.Join(unused, ", "))
		}
	}
}

type goFile struct {
	dir  string
	test bool
	ast  *ast.File
}

// parseModule parses every Go file of the module, comments included, outside
// testdata, hidden directories and the web app.
func parseModule(t *testing.T) []goFile {
	t.Helper()
	var files []goFile
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "web") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return err
		}
		files = append(files, goFile{dir: filepath.Dir(p), test: strings.HasSuffix(p, "_test.go"), ast: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("parsed only %d files; is the walk broken?", len(files))
	}
	return files
}

// exportedNames lists the package-level exported funcs, types, vars and
// consts the non-test files in dir declare, sorted.
func exportedNames(files []goFile, dir string) []string {
	seen := map[string]bool{}
	for _, f := range files {
		if f.dir != dir || f.test {
			continue
		}
		for _, decl := range f.ast.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					seen[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							seen[s.Name.Name] = true
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								seen[n.Name] = true
							}
						}
					}
				}
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func readModulePath(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "module "); ok {
			return strings.TrimSpace(rest)
		}
	}
	t.Fatal("go.mod has no module line")
	return ""
}

// closeOverSignatures marks, until nothing changes, every name of the
// module that the exported surface of a used name shows: a func's signature,
// a type's definition with its exported fields and its exported methods'
// signatures, a var's or const's declared type; and every constant whose
// declared type is used.
func closeOverSignatures(mod string, files []goFile, pkgName map[string]string, used map[string]map[string]bool, mark func(imp, name string)) {
	type surface struct {
		file  *ast.File
		dir   string
		exprs []ast.Expr
	}
	surfaces := map[string]map[string][]surface{} // import path -> name -> parts
	constType := map[string]map[string]string{}   // import path -> const -> its type's name
	add := func(imp, name string, s surface) {
		if surfaces[imp] == nil {
			surfaces[imp] = map[string][]surface{}
		}
		surfaces[imp][name] = append(surfaces[imp][name], s)
	}
	for _, f := range files {
		if f.test {
			continue
		}
		imp := mod + "/" + filepath.ToSlash(f.dir)
		for _, decl := range f.ast.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				name := d.Name.Name
				if d.Recv != nil {
					name = receiverName(d.Recv.List[0].Type)
				}
				add(imp, name, surface{f.ast, f.dir, []ast.Expr{d.Type}})
			case *ast.GenDecl:
				var iotaType ast.Expr // a const group repeats the last type and expression
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						add(imp, s.Name.Name, surface{f.ast, f.dir, exportedParts(s)})
					case *ast.ValueSpec:
						typ := s.Type
						if d.Tok == token.CONST {
							if typ == nil && len(s.Values) == 0 {
								typ = iotaType
							}
							iotaType = typ
						}
						for _, n := range s.Names {
							if typ != nil {
								add(imp, n.Name, surface{f.ast, f.dir, []ast.Expr{typ}})
							}
							if id, ok := typ.(*ast.Ident); ok && d.Tok == token.CONST {
								if constType[imp] == nil {
									constType[imp] = map[string]string{}
								}
								constType[imp][n.Name] = id.Name
							}
						}
					}
				}
			}
		}
	}
	for changed := true; changed; {
		changed = false
		markNew := func(imp, name string) {
			if !used[imp][name] {
				mark(imp, name)
				changed = true
			}
		}
		for imp, names := range used {
			for name := range names {
				for _, s := range surfaces[imp][name] {
					locals := importLocals(mod, s.file, pkgName)
					for _, e := range s.exprs {
						ast.Inspect(e, func(n ast.Node) bool {
							switch n := n.(type) {
							case *ast.SelectorExpr:
								if id, ok := n.X.(*ast.Ident); ok {
									if other, ok := locals[id.Name]; ok {
										markNew(other, n.Sel.Name)
									}
								}
								return false
							case *ast.Ident:
								markNew(imp, n.Name)
							}
							return true
						})
					}
				}
			}
		}
		for imp, consts := range constType {
			for c, typ := range consts {
				if used[imp][typ] {
					markNew(imp, c)
				}
			}
		}
	}
}

// exportedParts is what a type declaration shows a caller: the whole type
// except the unexported fields of a struct.
func exportedParts(s *ast.TypeSpec) []ast.Expr {
	st, ok := s.Type.(*ast.StructType)
	if !ok {
		return []ast.Expr{s.Type}
	}
	var parts []ast.Expr
	for _, field := range st.Fields.List {
		if len(field.Names) == 0 {
			parts = append(parts, field.Type) // embedded
			continue
		}
		for _, n := range field.Names {
			if n.IsExported() {
				parts = append(parts, field.Type)
				break
			}
		}
	}
	return parts
}

func receiverName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// importLocals maps the local names a file gives the module's packages it
// imports to their import paths.
func importLocals(mod string, f *ast.File, pkgName map[string]string) map[string]string {
	locals := map[string]string{}
	for _, is := range f.Imports {
		imp, _ := strconv.Unquote(is.Path.Value)
		if !strings.HasPrefix(imp, mod+"/") {
			continue
		}
		local := pkgName[filepath.FromSlash(strings.TrimPrefix(imp, mod+"/"))]
		if local == "" {
			local = path.Base(imp)
		}
		if is.Name != nil {
			local = is.Name.Name
		}
		locals[local] = imp
	}
	return locals
}

// sentinelErrors lists, per import path, the exported vars named Err… whose
// value is an errors.New call.
func sentinelErrors(mod string, files []goFile) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, f := range files {
		if f.test {
			continue
		}
		imp := mod + "/" + filepath.ToSlash(f.dir)
		for _, decl := range f.ast.Decls {
			d, ok := decl.(*ast.GenDecl)
			if !ok || d.Tok != token.VAR {
				continue
			}
			for _, spec := range d.Specs {
				s := spec.(*ast.ValueSpec)
				for i, n := range s.Names {
					if !strings.HasPrefix(n.Name, "Err") || i >= len(s.Values) {
						continue
					}
					call, ok := s.Values[i].(*ast.CallExpr)
					if !ok {
						continue
					}
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "New" {
						if x, ok := sel.X.(*ast.Ident); ok && x.Name == "errors" {
							if out[imp] == nil {
								out[imp] = map[string]bool{}
							}
							out[imp][n.Name] = true
						}
					}
				}
			}
		}
	}
	return out
}
