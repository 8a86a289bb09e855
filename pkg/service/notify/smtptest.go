package notify

import (
	"bufio"
	"net"
	"strings"
	"sync"
)

// TestServer is a minimal SMTP server on loopback that keeps every message
// it receives, for tests of code that sends notices.
type TestServer struct {
	ln   net.Listener
	mu   sync.Mutex
	msgs []Received
	wg   sync.WaitGroup
}

// Received is a message as the test server got it.
type Received struct {
	From string
	To   []string
	Data string
}

// StartTestServer listens on 127.0.0.1 on a free port.
func StartTestServer() (*TestServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &TestServer{ln: ln}
	s.wg.Add(1)
	go s.serve()
	return s, nil
}

// Addr is host:port of the server.
func (s *TestServer) Addr() string { return s.ln.Addr().String() }

// Messages returns what was received so far.
func (s *TestServer) Messages() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.msgs...)
}

// Close stops the server.
func (s *TestServer) Close() error {
	err := s.ln.Close()
	s.wg.Wait()
	return err
}

func (s *TestServer) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.session(c)
		}()
	}
}

func (s *TestServer) session(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	say := func(line string) { c.Write([]byte(line + "\r\n")) }
	say("220 localhost svc test SMTP")
	var cur Received
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.ToUpper(strings.TrimSpace(line))
		switch {
		case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
			say("250 localhost")
		case strings.HasPrefix(cmd, "MAIL FROM:"):
			cur = Received{From: strings.Trim(strings.TrimSpace(line)[10:], "<> ")}
			say("250 ok")
		case strings.HasPrefix(cmd, "RCPT TO:"):
			cur.To = append(cur.To, strings.Trim(strings.TrimSpace(line)[8:], "<> "))
			say("250 ok")
		case cmd == "DATA":
			say("354 end with .")
			var b strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" || l == ".\n" {
					break
				}
				b.WriteString(strings.TrimPrefix(l, "."))
			}
			cur.Data = b.String()
			s.mu.Lock()
			s.msgs = append(s.msgs, cur)
			s.mu.Unlock()
			say("250 queued")
		case cmd == "QUIT":
			say("221 bye")
			return
		default:
			say("250 ok")
		}
	}
}
