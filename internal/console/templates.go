package console

import (
	"embed"
	"html/template"
	"io"
	"io/fs"
	"strconv"
	"strings"
)

// assets are the console's pages, stylesheet and script, in the binary:
// hand-written, nothing built, so `make build` needs no Node toolchain.
//
//go:embed templates/*.html static/*
var assets embed.FS

// pageTemplate is the layout with one page's blocks.
type pageTemplate struct{ t *template.Template }

func (p *pageTemplate) execute(w io.Writer, v view) error { return p.t.ExecuteTemplate(w, "layout", v) }

func (s *Server) funcs() template.FuncMap {
	return template.FuncMap{
		"prefix": func() string { return s.opts.Prefix },
		"short": func(id string) string {
			if len(id) > 8 {
				return id[:8]
			}
			return id
		},
		"date":      dateText,
		"join":      strings.Join,
		"clip":      clip,
		"num":       fmtFloat,
		"until":     untilText,
		"add":       func(a, b float64) float64 { return a + b },
		"thousands": thousands,
		"pct":       func(f float64) string { return fmtFloat(f*100) + "%" },
	}
}

// parseTemplates builds each page: the layout and the shared blocks, then
// the page's own file.
func (s *Server) parseTemplates() error {
	base, err := template.New("").Funcs(s.funcs()).ParseFS(assets, "templates/layout.html")
	if err != nil {
		return err
	}
	pages, err := fs.Glob(assets, "templates/*.html")
	if err != nil {
		return err
	}
	s.pages = map[string]*pageTemplate{}
	for _, file := range pages {
		name := strings.TrimSuffix(strings.TrimPrefix(file, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		t, err := template.Must(base.Clone()).ParseFS(assets, file)
		if err != nil {
			return err
		}
		s.pages[name] = &pageTemplate{t: t}
	}
	return nil
}

// thousands writes n with a comma between each group of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
