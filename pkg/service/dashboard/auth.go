package dashboard

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/store"
)

// Cookie names. The session cookie holds a random 256-bit token; the
// store keeps only its SHA-256. The sign-in cookie is a short-lived random
// value that binds the sign-in form's CSRF token to the browser that
// loaded the form.
const (
	SessionCookie = "svc_session"
	SigninCookie  = "svc_signin"
)

// CSRF tokens are derived from the secret the browser holds in an HttpOnly
// cookie, so a page of another origin can neither read nor compute them:
// token = base64url(HMAC-SHA256(key = cookie value, purpose)).
const (
	csrfPurposeSession = "svc-dashboard-csrf-v1"
	csrfPurposeSignin  = "svc-dashboard-signin-v1"
)

// ErrCSRF is the error of a form post whose CSRF token or origin is wrong.
var ErrCSRF = errors.New("the form's CSRF token or origin does not match this session: reload the page and submit it again")

type ctxKey struct{}

// sess is the signed-in session of a request.
type sess struct {
	store.WebSession
	token string // the cookie value
}

func newToken() string {
	b := make([]byte, 32)
	rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

func tokenHash(tok string) []byte { h := sha256.Sum256([]byte(tok)); return h[:] }

func csrfToken(secret, purpose string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(purpose))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// sameOrigin rejects a form post whose Origin (or, without one, Referer)
// names another origin than the request's host. Browsers send Origin on
// every POST; a request with neither (not a browser) passes on its CSRF
// token alone.
func sameOrigin(r *http.Request) bool {
	src := r.Header.Get("Origin")
	if src == "" {
		src = r.Header.Get("Referer")
	}
	if src == "" {
		return true
	}
	u, err := url.Parse(src)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}

func (d *Dashboard) checkCSRF(r *http.Request, secret, purpose string) error {
	if !sameOrigin(r) {
		return ErrCSRF
	}
	got := r.PostFormValue("csrf")
	if got == "" || secret == "" || !hmac.Equal([]byte(got), []byte(csrfToken(secret, purpose))) {
		return ErrCSRF
	}
	return nil
}

// secure reports whether cookies get the Secure attribute: over TLS, when
// configured, or when a proxy says the browser's request was HTTPS
// (X-Forwarded-Proto: https). Trusting that header is safe here: a forged
// one only makes the sender's own cookie stricter.
func (d *Dashboard) secure(r *http.Request) bool {
	return r.TLS != nil || d.cfg.SecureCookies || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

func (d *Dashboard) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: Prefix, MaxAge: maxAge,
		HttpOnly: true, Secure: d.secure(r), SameSite: http.SameSiteStrictMode})
}

// currentSession returns the request's session if its cookie names a
// session the store holds, unexpired, whose API key is not revoked.
func (d *Dashboard) currentSession(r *http.Request) (sess, error) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" || len(c.Value) > 128 {
		return sess{}, store.ErrNotFound
	}
	ws, err := d.cfg.Storage.Sessions.WebSession(r.Context(), tokenHash(c.Value), d.cfg.Now())
	if err != nil {
		return sess{}, err
	}
	return sess{WebSession: ws, token: c.Value}, nil
}

// session wraps a page that needs a signed-in user: without a valid
// session, GETs go to the sign-in page and posts are refused; posts must
// carry the session's CSRF token; a sandbox session's requests are
// rate-limited (Config.Limit).
func (d *Dashboard) session(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, err := d.currentSession(r)
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrRevoked) {
				d.serverError(w, r, err)
				return
			}
			d.setCookie(w, r, SessionCookie, "", -1)
			if r.Method == http.MethodGet {
				http.Redirect(w, r, Prefix+"signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			d.errorPage(w, r, http.StatusUnauthorized, "You are not signed in (or your session expired): sign in again.")
			return
		}
		if s.Environment == string(vpec.Sandbox) && d.cfg.Limit != nil {
			if ok, wait := d.cfg.Limit(s.APIKeyID); !ok {
				secs := int(wait/time.Second) + 1
				w.Header().Set("Retry-After", strconv.Itoa(secs))
				d.errorPage(w, r, http.StatusTooManyRequests, fmt.Sprintf("Sandbox keys are rate-limited (API calls and dashboard pages together): try again in %d s, or sign in with a production key.", secs))
				return
			}
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
			if err := d.checkCSRF(r, s.token, csrfPurposeSession); err != nil {
				d.errorPage(w, r, http.StatusForbidden, err.Error())
				return
			}
		}
		next(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, s)))
	}
}

func current(r *http.Request) sess { return r.Context().Value(ctxKey{}).(sess) }

// safeNext is a local dashboard path to go to after sign-in, or the
// registry page.
func safeNext(next string) string {
	if strings.HasPrefix(next, Prefix) && !strings.HasPrefix(next, "//") && !strings.ContainsAny(next, "\\\r\n") {
		return next
	}
	return Prefix + "registry"
}

func (d *Dashboard) signinPage(w http.ResponseWriter, r *http.Request) {
	d.showSignin(w, r, http.StatusOK, "", r.URL.Query().Get("next"))
}

func (d *Dashboard) showSignin(w http.ResponseWriter, r *http.Request, status int, problem, next string) {
	pre := newToken()
	d.setCookie(w, r, SigninCookie, pre, 600)
	d.render(w, r, status, "signin", map[string]any{
		"Title": "Sign in", "Problem": problem, "Next": safeNext(next),
		"SigninCSRF": csrfToken(pre, csrfPurposeSignin),
	})
}

func (d *Dashboard) signin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	next := r.PostFormValue("next")
	pre, err := r.Cookie(SigninCookie)
	if err != nil || d.checkCSRF(r, pre.Value, csrfPurposeSignin) != nil {
		d.showSignin(w, r, http.StatusForbidden, "The sign-in form expired or came from another site: try again.", next)
		return
	}
	key := strings.TrimSpace(r.PostFormValue("api_key"))
	if key == "" {
		d.showSignin(w, r, http.StatusBadRequest, "Enter an API key (pk_live_... or pk_sb_...).", next)
		return
	}
	k, err := d.cfg.AuthKey(r.Context(), key)
	if err != nil {
		d.showSignin(w, r, http.StatusUnauthorized, "Sign-in refused: "+err.Error(), next)
		return
	}
	tok := newToken()
	now := d.cfg.Now().UTC()
	if err := d.cfg.Storage.Sessions.CreateWebSession(r.Context(), store.WebSession{IDHash: tokenHash(tok), OrgID: k.OrgID, APIKeyID: k.ID,
		CreatedAt: now, ExpiresAt: now.Add(d.cfg.SessionTTL)}); err != nil {
		d.serverError(w, r, err)
		return
	}
	// Expired sessions are swept at each sign-in: the table holds live
	// sessions and those of the last TTL only.
	if _, err := d.cfg.Storage.Sessions.DeleteExpiredWebSessions(r.Context(), now); err != nil {
		d.log.Warn("dashboard: sweep expired sessions", "error", err.Error())
	}
	d.setCookie(w, r, SigninCookie, "", -1)
	d.setCookie(w, r, SessionCookie, tok, int(d.cfg.SessionTTL.Seconds()))
	http.Redirect(w, r, safeNext(next), http.StatusSeeOther)
}

func (d *Dashboard) signout(w http.ResponseWriter, r *http.Request) {
	if err := d.cfg.Storage.Sessions.DeleteWebSession(r.Context(), current(r).IDHash); err != nil {
		d.serverError(w, r, err)
		return
	}
	d.setCookie(w, r, SessionCookie, "", -1)
	http.Redirect(w, r, Prefix+"signin", http.StatusSeeOther)
}
