package sdk

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// protocolImports are the packages whose types follow proto/: none may
// appear in package sdk's exported API, so that a protocol change an author
// does not see changes nothing here (docs/plugins.md, Stability).
var protocolImports = []string{"github.com/ai-memory/ai-memory/sdk/wire", "google.golang.org/grpc", "google.golang.org/protobuf"}

// protocolEscapes are the exported declarations allowed to mention them:
// the documented way to the protocol-level client.
var protocolEscapes = map[string]bool{"Engine.Protocol": true}

func TestExportedAPIHasNoProtocolTypes(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range pkgs["sdk"].Files {
		protocol := map[string]bool{} // local names of protocol imports in this file
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, p := range protocolImports {
				if strings.HasPrefix(path, p) {
					name := path[strings.LastIndex(path, "/")+1:]
					if imp.Name != nil {
						name = imp.Name.Name
					}
					protocol[name] = true
				}
			}
		}
		check := func(decl string, n ast.Node) {
			if n == nil || protocolEscapes[decl] {
				return
			}
			ast.Inspect(n, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && protocol[x.Name] {
						t.Errorf("%s: exported %s mentions %s.%s", fset.Position(sel.Pos()), decl, x.Name, sel.Sel.Name)
					}
				}
				return true
			})
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				name := d.Name.Name
				if d.Recv != nil {
					recv := d.Recv.List[0].Type
					if s, ok := recv.(*ast.StarExpr); ok {
						recv = s.X
					}
					if !recv.(*ast.Ident).IsExported() {
						continue
					}
					name = recv.(*ast.Ident).Name + "." + name
				}
				check(name, d.Type)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						if st, ok := s.Type.(*ast.StructType); ok { // unexported fields are the SDK's own
							for _, fld := range st.Fields.List {
								if len(fld.Names) == 0 || fld.Names[0].IsExported() {
									check(s.Name.Name, fld.Type)
								}
							}
							continue
						}
						check(s.Name.Name, s.Type)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								check(n.Name, s.Type)
								for _, v := range s.Values {
									check(n.Name, v)
								}
							}
						}
					}
				}
			}
		}
	}
}

// Importing the SDK changes no process-wide setting, and links no token
// counter: a plugin that counts no token carries none (sdk/tokens).
func TestImportHasNoSideEffects(t *testing.T) {
	deps, err := exec.Command("go", "list", "-deps", ".", "./wire").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(deps), "tiktoken") {
		t.Error("package sdk links the tokenizer; only sdk/tokens may")
	}
	for _, dir := range []string{".", "wire"} {
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pkgs {
			for _, f := range p.Files {
				for _, d := range f.Decls {
					fn, ok := d.(*ast.FuncDecl)
					if !ok || fn.Name.Name != "init" || fn.Recv != nil {
						continue
					}
					// The one init allowed fills sdk/internal/bridge, the SDK's own linkage.
					for _, st := range fn.Body.List {
						as, ok := st.(*ast.AssignStmt)
						sel, isSel := ast.Node(nil), false
						if ok && len(as.Lhs) == 1 {
							sel, isSel = as.Lhs[0].(*ast.SelectorExpr)
						}
						if !isSel || sel.(*ast.SelectorExpr).X.(*ast.Ident).Name != "bridge" {
							t.Errorf("%s: init does more than fill sdk/internal/bridge", fset.Position(st.Pos()))
						}
					}
				}
			}
		}
	}
}
