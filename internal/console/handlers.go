package console

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/ai-memory/ai-memory/sdk"
)

const (
	// callTimeout bounds one tool call of a page.
	callTimeout = 30 * time.Second
	// maxFormBytes bounds a change's body: a memory's content and the rest.
	maxFormBytes = 2 << 20
)

// request is one page or change for a signed-in session.
type request struct {
	w   http.ResponseWriter
	r   *http.Request
	ses *session
}

// toolError is a tool's error answer, shown as the tool wrote it.
type toolError struct {
	tool, text string
}

func (e *toolError) Error() string { return e.text }

// call runs tool with args for the session's principal and decodes its
// JSON answer into out (nil: ignored).
func (q *request) call(tool string, args map[string]any, out any) error {
	raw, err := json.Marshal(args)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(q.r.Context(), callTimeout)
	defer cancel()
	text, isErr := q.ses.entry.host.Call(ctx, tool, raw)
	if isErr {
		return &toolError{tool: tool, text: string(text)}
	}
	if out != nil {
		if err := json.Unmarshal(text, out); err != nil {
			return fmt.Errorf("%s answered what is not JSON: %s", tool, sdk.Quote(string(text)))
		}
	}
	return nil
}

// can reports whether the principal may run tool.
func (q *request) can(tool string) bool { return q.ses.entry.host.Callable(tool) }

// parallel runs fns at most four at a time and waits for them all: the
// review's per-memory checks are independent tool calls.
func parallel(fns []func()) {
	var wg sync.WaitGroup
	slots := make(chan struct{}, 4)
	for _, fn := range fns {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			fn()
		})
	}
	wg.Wait()
}

// signedIn is the request's live session; nil when it has none. In team
// mode the key it signed in with must still be valid, with the same grant:
// a revoked or changed key ends its sessions at once.
func (s *Server) signedIn(r *http.Request) *session {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return nil
	}
	ses := s.sessions.get(c.Value)
	if ses == nil || s.opts.Keys == nil {
		return ses
	}
	if p, err := s.opts.Keys(ses.key); err != nil || p.Key() != ses.p.Key() {
		s.sessions.stop(ses)
		return nil
	}
	return ses
}

// page serves a GET page that needs tool ("" = none in particular): a
// visitor without a session is sent to sign in, a principal who may not
// run it gets not found (its pages are hidden).
func (s *Server) page(tool string, fn func(*request) (string, any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ses := s.signedIn(r)
		if ses == nil {
			s.redirect(w, r, "login")
			return
		}
		q := &request{w: w, r: r, ses: ses}
		if tool != "" && !q.can(tool) {
			s.renderError(q, http.StatusNotFound, fmt.Sprintf("This page needs %s, which your credential does not grant.", tool))
			return
		}
		name, data, err := fn(q)
		if err != nil {
			var te *toolError
			if errors.As(err, &te) {
				s.renderError(q, http.StatusBadRequest, te.tool+": "+te.text)
				return
			}
			s.log.Error("console page failed", "path", r.URL.Path, "err", err)
			s.renderError(q, http.StatusInternalServerError, err.Error())
			return
		}
		s.render(q, http.StatusOK, name, data)
	}
}

// operatorPage serves a page that needs the operator grant.
func (s *Server) operatorPage(fn func(*request) (string, any, error)) http.HandlerFunc {
	page := s.page("", fn)
	return func(w http.ResponseWriter, r *http.Request) {
		if ses := s.signedIn(r); ses != nil && !operator(ses.p) {
			s.renderError(&request{w: w, r: r, ses: ses}, http.StatusForbidden,
				"This page needs the operator grant: an API key created with --namespace '*' (docs/console.md).")
			return
		}
		page(w, r)
	}
}

// change serves a POST that changes something: it needs a session and the
// session's CSRF token, runs fn, and redirects where fn says (post,
// redirect, get: a reload never repeats a change).
func (s *Server) change(fn func(*request) string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ses := s.signedIn(r)
		if ses == nil {
			s.opts.Refused(r, "", http.StatusForbidden, "sign_in", "a change without a console session")
			s.redirect(w, r, "login")
			return
		}
		q := &request{w: w, r: r, ses: ses}
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if err := r.ParseForm(); err != nil {
			s.renderError(q, http.StatusBadRequest, "The form could not be read: "+err.Error())
			return
		}
		if !sameToken(ses.csrf, r.PostForm.Get("csrf")) {
			s.opts.Refused(r, ses.p.ID, http.StatusForbidden, "csrf", "a console change without the session's CSRF token")
			s.renderError(q, http.StatusForbidden, "This change was refused: it did not carry this session's form token. Reload the page and try again.")
			return
		}
		if next := fn(q); next != "" { // "": fn drew the page itself (a form shown again)
			s.redirect(w, r, next)
		}
	}
}

func sameToken(want, got string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(want), []byte(got)) == 1
}

// notice is a message shown once at the top of the next page.
type notice struct {
	Kind string // ok, pending, error
	Text string
	Link string // a page that says more ("" = none)
}

// outcome records a change's answer as the next page's notice: done, queued
// for approval by governance (the engine's own words), or refused.
func (s *Server) outcome(q *request, done string, err error) {
	var te *toolError
	switch {
	case err == nil:
		s.sessions.addNotice(q.ses, notice{Kind: "ok", Text: done})
	case errors.As(err, &te) && isQueued(te.text):
		s.sessions.addNotice(q.ses, notice{Kind: "pending", Text: te.text, Link: "review#pending"})
	case errors.As(err, &te):
		s.sessions.addNotice(q.ses, notice{Kind: "error", Text: te.tool + ": " + te.text})
	default:
		s.sessions.addNotice(q.ses, notice{Kind: "error", Text: err.Error()})
	}
}

// navItem is one entry of the navigation.
type navItem struct {
	Name, Path string
	Current    bool
}

// view is what every page template gets.
type view struct {
	Title    string
	Prefix   string
	Static   string
	Nav      []navItem
	Who      string
	Operator bool
	Local    bool
	CSRF     string
	Notices  []notice
	Data     any
}

// nav is the pages the principal may open: those whose tools it may run.
func (s *Server) nav(q *request, current string) []navItem {
	var items []navItem
	add := func(name, path string, ok bool) {
		if ok {
			items = append(items, navItem{Name: name, Path: path, Current: path == current})
		}
	}
	add("Memories", "memories", q.can("memory_list"))
	add("Graph", "graph", q.can("memory_kg_query"))
	add("Review", "review", q.can("memory_check_duplicate") || q.can("memory_pending_list") || q.can("memory_list"))
	add("Activity", "activity", q.can("memory_list"))
	add("Cost", "cost", operator(q.ses.p) && s.opts.Operator.Cost != nil)
	add("Health", "health", operator(q.ses.p) && s.opts.Operator.Health != nil)
	return items
}

// render executes page name into a buffer, then writes it: a template
// error never leaves half a page.
func (s *Server) render(q *request, status int, name string, data any) {
	t := s.pages[name]
	v := view{Prefix: s.opts.Prefix, Static: s.staticVersion, Data: data, Local: s.opts.Keys == nil}
	if q != nil && q.ses != nil {
		v.Nav, v.Who, v.Operator, v.CSRF = s.nav(q, name), q.ses.p.ID, operator(q.ses.p), q.ses.csrf
		v.Notices = s.sessions.takeNotices(q.ses)
	}
	if tv, ok := data.(interface{ title() string }); ok {
		v.Title = tv.title()
	}
	var buf bytes.Buffer
	if err := t.execute(&buf, v); err != nil {
		s.log.Error("console template failed", "page", name, "err", err)
		http.Error(q.w, "the page could not be drawn", http.StatusInternalServerError)
		return
	}
	q.w.Header().Set("Content-Type", "text/html; charset=utf-8")
	q.w.WriteHeader(status)
	q.w.Write(buf.Bytes())
}

// errorPage is the data of the error page.
type errorPage struct {
	Status  int
	Message string
}

func (e errorPage) title() string { return http.StatusText(e.Status) }

func (s *Server) renderError(q *request, status int, msg string) {
	s.render(q, status, "error", errorPage{Status: status, Message: msg})
}
