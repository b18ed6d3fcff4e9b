package console

import (
	"net/http"
	"strings"
	"time"
)

// loginPage is the sign-in page: in local mode a login link's landing (a
// token in the URL, usable once) or how to get one; in team mode the API
// key form.
type loginPage struct {
	Local bool
	CSRF  string // the sign-in form's token (its cookie's twin)
	Error string
	Info  string
}

func (loginPage) title() string { return "Sign in" }

func (s *Server) setSession(w http.ResponseWriter, r *http.Request, ses *session) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: ses.id, Path: s.opts.Prefix, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
}

// signInForm sets the sign-in form's CSRF cookie and returns its token:
// a sign-in must come from this page, not from another site's form.
func (s *Server) signInForm(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(preCookieName); err == nil && len(c.Value) == len(randomToken()) {
		return c.Value
	}
	t := randomToken()
	http.SetCookie(w, &http.Cookie{Name: preCookieName, Value: t, Path: s.opts.Prefix, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: 3600})
	return t
}

func (s *Server) signInFormOK(r *http.Request) bool {
	c, err := r.Cookie(preCookieName)
	return err == nil && sameToken(c.Value, r.PostForm.Get("csrf"))
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	q := &request{w: w, r: r}
	if token := r.URL.Query().Get("token"); token != "" && s.opts.Keys == nil {
		if !s.sessions.useLink(token) {
			s.opts.Refused(r, "", http.StatusForbidden, "sign_in", "a login link used before, expired or unknown")
			s.render(q, http.StatusForbidden, "login", loginPage{Local: true, CSRF: s.signInForm(w, r),
				Error: "This login link was used already or has expired: each link works once, for 10 minutes."})
			return
		}
		ses := s.sessions.start(s.opts.Local, "")
		s.setSession(w, r, ses)
		// A page that moves on by itself rather than a redirect: the session
		// cookie is SameSite=Strict, and a redirect from a link opened in
		// another site's page would not carry it.
		w.Header().Set("Refresh", "0;url="+s.opts.Prefix+"memories")
		s.render(q, http.StatusOK, "landing", landing{Next: s.opts.Prefix + "memories"})
		return
	}
	if s.signedIn(r) != nil {
		s.redirect(w, r, "memories")
		return
	}
	s.render(q, http.StatusOK, "login", loginPage{Local: s.opts.Keys == nil, CSRF: s.signInForm(w, r)})
}

// landing is the page a login link answers with.
type landing struct{ Next string }

func (landing) title() string { return "Signed in" }

// loginWithKey signs in with an API key (team mode).
func (s *Server) loginWithKey(w http.ResponseWriter, r *http.Request) {
	q := &request{w: w, r: r}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if s.opts.Keys == nil || r.ParseForm() != nil || !s.signInFormOK(r) {
		s.opts.Refused(r, "", http.StatusForbidden, "sign_in", "a console sign-in without its form token")
		s.render(q, http.StatusForbidden, "login", loginPage{Local: s.opts.Keys == nil, CSRF: s.signInForm(w, r),
			Error: "This sign-in was refused: it did not come from this page's form. Try again."})
		return
	}
	p, err := s.opts.Keys(strings.TrimSpace(r.PostForm.Get("key")))
	if err != nil {
		s.opts.Refused(r, "", http.StatusUnauthorized, "sign_in", err.Error())
		s.render(q, http.StatusUnauthorized, "login", loginPage{CSRF: s.signInForm(w, r), Error: "Sign-in refused: " + err.Error()})
		return
	}
	ses := s.sessions.start(p, strings.TrimSpace(r.PostForm.Get("key")))
	s.setSession(w, r, ses)
	s.redirect(w, r, "memories")
}

// newLoginLink prints a new login link on the terminal (local mode): only
// whoever sees that terminal can use it. One every 5 seconds at most.
func (s *Server) newLoginLink(w http.ResponseWriter, r *http.Request) {
	q := &request{w: w, r: r}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if s.opts.Keys != nil || s.opts.PrintLink == nil || r.ParseForm() != nil || !s.signInFormOK(r) {
		s.opts.Refused(r, "", http.StatusForbidden, "sign_in", "a login link request without its form token")
		s.render(q, http.StatusForbidden, "login", loginPage{Local: s.opts.Keys == nil, CSRF: s.signInForm(w, r),
			Error: "This request was refused: it did not come from this page's form."})
		return
	}
	s.linkPrinted.Lock()
	wait := s.linkPrinted.at.Add(5*time.Second).Sub(now()) > 0
	if !wait {
		s.linkPrinted.at = now()
	}
	s.linkPrinted.Unlock()
	info := "A new login link is on the terminal where ai-memory ui runs."
	if wait {
		info = "A link was printed a moment ago: look at the terminal where ai-memory ui runs."
	} else {
		s.opts.PrintLink(s.LoginLink())
	}
	s.render(q, http.StatusOK, "login", loginPage{Local: true, CSRF: s.signInForm(w, r), Info: info})
}

func (s *Server) logout(q *request) string {
	s.sessions.stop(q.ses)
	http.SetCookie(q.w, &http.Cookie{Name: cookieName, Value: "", Path: s.opts.Prefix, MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: q.r.TLS != nil})
	return "login"
}
