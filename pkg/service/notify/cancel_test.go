package notify_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/notify"
)

// silentSMTP accepts connections on 127.0.0.1, reports each on accepted
// and never says a word (no greeting): a mail server that hangs.
func silentSMTP(t *testing.T) (addr string, accepted <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{}, 16)
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
			got <- struct{}{}
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String(), got
}

// TestSendAbandonedOnCancel: Send to a server that never answers returns
// when its context is cancelled (or has expired before the dial), with the
// context's error matchable by errors.Is. The mailer's own timeout is an
// hour, so only ctx can end the call; no timing is measured.
func TestSendAbandonedOnCancel(t *testing.T) {
	msg := notify.Message{To: "ml-team@acme.test", Subject: "s", Body: "b"}
	t.Run("cancel", func(t *testing.T) {
		addr, accepted := silentSMTP(t)
		m := &notify.Mailer{Addr: addr, From: "svc@localhost", Timeout: time.Hour}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- m.Send(ctx, msg) }()
		<-accepted
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("Send after cancel: %v, want context.Canceled", err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		addr, accepted := silentSMTP(t)
		m := &notify.Mailer{Addr: addr, From: "svc@localhost", Timeout: time.Hour}
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		if err := m.Send(ctx, msg); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Send past its deadline: %v, want context.DeadlineExceeded", err)
		}
		select {
		case <-accepted:
			t.Error("a Send whose deadline had passed connected")
		default:
		}
	})
}
