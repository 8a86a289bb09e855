package server_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/server"
)

// slowGet sends GET path with key on a connection whose receive buffer is
// small (so the server's writes wait for the reader), and returns the
// response with its body unread, to be read through the returned reader.
func slowGet(t *testing.T, h *hostile, path, key string) (*http.Response, net.Conn) {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 32<<10) })
		if err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.DialContext(context.Background(), "tcp", strings.TrimPrefix(h.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: svc\r\nAuthorization: Bearer %s\r\n\r\n", path, key)
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 4096), nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp, conn
}

// TestSlowReaderGetsWholeVPEC: a client that reads a VPEC slowly but
// steadily gets all of it although that takes several times the HTTP
// server's write timeout (300 ms here; svc serve's is 2 minutes): large
// bodies are written with progress deadlines. Found: a client reading at
// 1 MiB/s was cut after 116.6 of 254.6 MiB, and the log said 200.
func TestSlowReaderGetsWholeVPEC(t *testing.T) {
	h := newHostile(t, nil, func(ts *httptest.Server) { ts.Config.WriteTimeout = 300 * time.Millisecond })
	doc, id := h.closeRun(h.live, h.bigRun(h.live, 10))
	resp, _ := slowGet(t, h, "/api/v1/vpecs/"+id, h.live)
	if resp.StatusCode != 200 {
		t.Fatalf("GET VPEC: %s", resp.Status)
	}
	var got bytes.Buffer
	buf := make([]byte, 64<<10)
	start := time.Now()
	for {
		n, err := resp.Body.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			if err != io.EOF {
				t.Logf("read: %v", err)
			}
			break
		}
		time.Sleep(10 * time.Millisecond) // about 6 MB/s at most: 10 MB take well over the write timeout
	}
	took := time.Since(start)
	if !bytes.Equal(got.Bytes(), doc) {
		t.Fatalf("a slow reader got %d of the VPEC's %d bytes in %v (write timeout 300 ms)", got.Len(), len(doc), took.Round(time.Millisecond))
	}
	if logs := h.logs.String(); strings.Contains(logs, "response cut") {
		t.Errorf("a whole response was logged as cut:\n%s", logs)
	}
	t.Logf("read %d bytes in %v with a 300 ms write timeout", got.Len(), took.Round(time.Millisecond))
}

// TestStalledReaderIsCutAndLoggedSo: a client that stops reading a large
// response is cut once it has taken nothing for WriteStall, and the log
// says the response was cut, with the bytes sent, never "status=200".
// Found: the server logged 200 for responses cut by its write timeout.
func TestStalledReaderIsCutAndLoggedSo(t *testing.T) {
	h := newHostile(t, func(c *server.Config) { c.WriteStall = 300 * time.Millisecond },
		func(ts *httptest.Server) { ts.Config.WriteTimeout = time.Second })
	_, id := h.closeRun(h.live, h.bigRun(h.live, 10))
	path := "/api/v1/vpecs/" + id
	resp, conn := slowGet(t, h, path, h.live)
	if resp.StatusCode != 200 {
		t.Fatalf("GET VPEC: %s", resp.Status)
	}
	var line string
	for deadline := time.Now().Add(time.Minute); line == "" && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond) // read nothing: the server must give up
		for _, l := range strings.Split(h.logs.String(), "\n") {
			if strings.Contains(l, "path="+path) {
				line = l
			}
		}
	}
	conn.Close()
	if line == "" {
		t.Fatalf("no log line for the stalled response:\n%s", h.logs.String())
	}
	if strings.Contains(line, "status=200") || !strings.Contains(line, `msg="response cut"`) || !strings.Contains(line, "bytes_sent=") {
		t.Errorf("the stalled response is logged as\n%s\nwant a \"response cut\" line with the bytes sent and no status=200", line)
	}
}
