package notify_test

import (
	"context"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/service/notify"
)

func TestSendThroughSMTP(t *testing.T) {
	srv, err := notify.StartTestServer()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	m, err := notify.Parse("smtp://" + srv.Addr() + "?from=registry@svc.test")
	if err != nil {
		t.Fatal(err)
	}
	err = m.Send(context.Background(), notify.Message{To: "ml-team@acme.test", Subject: "Profile published: acme/pii-class/v1.0.0", Body: "Your model now has a profile.\n.\nA line with a dot."})
	if err != nil {
		t.Fatal(err)
	}
	msgs := srv.Messages()
	if len(msgs) != 1 || msgs[0].From != "registry@svc.test" || msgs[0].To[0] != "ml-team@acme.test" ||
		!strings.Contains(msgs[0].Data, "Subject: Profile published") || !strings.Contains(msgs[0].Data, "A line with a dot.") {
		t.Fatalf("received %+v", msgs)
	}
	if err := m.Send(context.Background(), notify.Message{To: "x@y\r\nBcc: evil@z", Subject: "s"}); err == nil {
		t.Fatal("header injection through the recipient was accepted")
	}
	var none *notify.Mailer
	if err := none.Send(context.Background(), notify.Message{To: "a@b"}); err != notify.ErrNoMailer {
		t.Fatalf("nil mailer: %v", err)
	}
	for _, bad := range []string{"http://x", "smtp://", "::"} {
		if _, err := notify.Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}
