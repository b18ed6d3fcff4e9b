package mcphost

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// hostTrees are the host's code: what serves every family alike. The CLI
// and the console are clients that call tools by name through the host's
// tool-call path, and are not in it.
var hostTrees = []string{".", "../httpfront", "../supervisor", "../engine"}

// eventTypes is where the engine declares its event types: they name
// changes (a subscription filters on them), and several share the name of
// the tool that usually asks for the change.
const eventTypes = "../engine/storage/eventtypes.go"

// The host has no per-family code: no string literal in its non-test
// sources names a tool a family declares.
func TestNoToolNamesInHostCode(t *testing.T) {
	tools := declaredTools(t, "../../plugins", "../../examples")
	if !slices.Contains(tools, "memory_store") || !slices.Contains(tools, "memory_kg_query") {
		t.Fatalf("the families' tools were not found: %v", tools)
	}
	slices.SortFunc(tools, func(a, b string) int { return len(b) - len(a) })
	for i, name := range tools {
		tools[i] = regexp.QuoteMeta(name)
	}
	named := regexp.MustCompile(`\b(` + strings.Join(tools, "|") + `)\b`)
	for _, root := range hostTrees {
		eachSource(t, root, func(path string, f *ast.File, fset *token.FileSet) {
			if filepath.Clean(path) == filepath.Clean(eventTypes) {
				return
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					for _, m := range named.FindAllString(lit.Value, -1) {
						t.Errorf("%s: string literal names the tool %s: %.80s", fset.Position(lit.Pos()), m, lit.Value)
					}
				}
				return true
			})
		})
	}
}

// declaredTools are the names of the tools declared under roots: the Name
// of every literal that also has a Handler (an sdk.Tool).
func declaredTools(t *testing.T, roots ...string) []string {
	var names []string
	for _, root := range roots {
		eachSource(t, root, func(_ string, f *ast.File, _ *token.FileSet) {
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.CompositeLit)
				if !ok {
					return true
				}
				var name string
				handler := false
				for _, e := range lit.Elts {
					kv, ok := e.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					switch key, _ := kv.Key.(*ast.Ident); {
					case key == nil:
					case key.Name == "Handler":
						handler = true
					case key.Name == "Name":
						if v, ok := kv.Value.(*ast.BasicLit); ok && v.Kind == token.STRING {
							name, _ = strconv.Unquote(v.Value)
						}
					}
				}
				if handler && name != "" {
					names = append(names, name)
				}
				return true
			})
		})
	}
	return names
}

// eachSource parses every non-test, non-generated Go file under root,
// test-support packages (…test) aside.
func eachSource(t *testing.T, root string, visit func(path string, f *ast.File, fset *token.FileSet)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != root && (strings.HasSuffix(d.Name(), "test") || d.Name() == "testdata"):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasSuffix(path, ".pb.go"):
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		visit(path, f, fset)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
