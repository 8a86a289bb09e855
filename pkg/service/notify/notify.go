// Package notify sends the service's e-mail notices (a calibration profile
// was published) through an SMTP server.
package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/smtp"
	"net/url"
	"strings"
	"time"
)

// Mailer sends mail through one SMTP server.
type Mailer struct {
	// Addr is host:port of the SMTP server.
	Addr string
	// From is the envelope and header sender.
	From string
	// Auth authenticates to the server; nil for none.
	Auth smtp.Auth
	// Timeout bounds connecting and the whole exchange (default 10 s); the
	// context passed to Send may bound it further.
	Timeout time.Duration
}

// ErrNoMailer is returned when no SMTP server is configured.
var ErrNoMailer = errors.New("no SMTP server configured")

// Parse reads an SMTP URL: smtp://[user:password@]host:port?from=addr.
// An empty string gives a nil Mailer (notices are then logged, not sent).
func Parse(raw string) (*Mailer, error) {
	if raw == "" {
		return nil, nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "smtp" || u.Host == "" {
		return nil, fmt.Errorf("SMTP URL %q: want smtp://[user:password@]host:port?from=notices@example.com", raw)
	}
	m := &Mailer{Addr: u.Host, From: u.Query().Get("from")}
	if _, _, err := net.SplitHostPort(u.Host); err != nil {
		m.Addr = net.JoinHostPort(u.Host, "25")
	}
	if m.From == "" {
		m.From = "svc@localhost"
	}
	if u.User != nil {
		pw, _ := u.User.Password()
		host, _, _ := net.SplitHostPort(m.Addr)
		m.Auth = smtp.PlainAuth("", u.User.Username(), pw, host)
	}
	return m, nil
}

// Message is one e-mail.
type Message struct {
	To      string
	Subject string
	Body    string
}

// Send delivers msg. Header values are encoded so that no input can inject
// headers. ctx bounds the dial and the whole exchange, as Timeout does:
// the connection's deadline is the earlier of the two, and when ctx is
// done the connection is closed and the error wraps ctx.Err().
func (m *Mailer) Send(ctx context.Context, msg Message) (err error) {
	if m == nil {
		return ErrNoMailer
	}
	if strings.ContainsAny(msg.To, "\r\n") || !strings.Contains(msg.To, "@") {
		return fmt.Errorf("notify: invalid recipient %q", msg.To)
	}
	timeout := m.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", m.Addr)
	if err != nil {
		return fmt.Errorf("notify: connect %s: %w", m.Addr, err)
	}
	if deadline, ok := ctx.Deadline(); ok {
		conn.SetDeadline(deadline)
	}
	// A cancelled ctx (no deadline of its own) closes the connection, which
	// ends any read or write under way; the error then names ctx.Err().
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer func() {
		if !stop() && err != nil {
			err = fmt.Errorf("notify: %w: %w", context.Cause(ctx), err)
		}
	}()
	host, _, _ := net.SplitHostPort(m.Addr)
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("notify: %s: %w", m.Addr, err)
	}
	defer c.Close()
	if m.Auth != nil {
		if err := c.Auth(m.Auth); err != nil {
			return fmt.Errorf("notify: authenticate to %s: %w", m.Addr, err)
		}
	}
	if err := c.Mail(m.From); err != nil {
		return fmt.Errorf("notify: MAIL FROM: %w", err)
	}
	if err := c.Rcpt(msg.To); err != nil {
		return fmt.Errorf("notify: RCPT TO %s: %w", msg.To, err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("notify: DATA: %w", err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n",
		m.From, msg.To, mime.QEncoding.Encode("utf-8", msg.Subject), time.Now().UTC().Format(time.RFC1123Z))
	b.WriteString(strings.ReplaceAll(strings.ReplaceAll(msg.Body, "\r\n", "\n"), "\n", "\r\n"))
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("notify: write message: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("notify: end of message: %w", err)
	}
	return c.Quit()
}
