package reliability

import (
	"bufio"
	"crypto/tls"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/internal/testcert"
)

// TestTLSReload serves the built cmd/rpcedge over TLS (-tls-cert,
// -tls-key), replaces the certificate files and sends SIGHUP while a
// keep-alive connection is open and a client keeps calling on it: that
// connection goes on without an error, new connections get the new
// certificate, TLS 1.1 is refused, and SIGTERM still exits 0.
func TestTLSReload(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, err := testcert.Write(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	b := startBinary(t, "-tls-cert", certFile, "-tls-key", keyFile)
	dial := func(cfg *tls.Config) (*tls.Conn, error) {
		return tls.DialWithDialer(&net.Dialer{Timeout: ioTimeout}, "tcp", b.addr, cfg)
	}
	client := &tls.Config{InsecureSkipVerify: true}
	c, err := dial(client)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	call := func(i int) error {
		c.SetDeadline(time.Now().Add(ioTimeout))
		if _, err := c.Write([]byte(rawReq("/mcp", string(echoCall(i, "tls")), "Content-Type: application/json"))); err != nil {
			return err
		}
		r, err := http.ReadResponse(br, nil)
		if err != nil {
			return err
		}
		r.Body.Close()
		if r.StatusCode != 200 {
			t.Errorf("call %d: %s", i, r.Status)
		}
		return nil
	}
	serial := func() int64 {
		x, err := dial(client)
		if err != nil {
			t.Fatalf("a new connection: %v", err)
		}
		defer x.Close()
		return x.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
	}
	if s := serial(); s != 1 {
		t.Fatalf("serial %d, want 1", s)
	}
	calls := 0
	for i := range 20 {
		if err := call(i); err != nil {
			t.Fatalf("call %d before the reload: %v", i, err)
		}
		calls++
	}
	if _, _, err := testcert.Write(dir, 2); err != nil {
		t.Fatal(err)
	}
	if err := b.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for serial() != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("new connections still get the old certificate 5 s after SIGHUP; log:\n%s", b.logs.String())
		}
		if err := call(calls); err != nil {
			t.Fatalf("the open connection failed during the reload: %v", err)
		}
		calls++
	}
	for range 20 {
		if err := call(calls); err != nil {
			t.Fatalf("the open connection failed after the reload: %v", err)
		}
		calls++
	}
	// The server logs the reload after it swaps the certificate, and its
	// standard error reaches b.logs through a pipe: wait for the line.
	for logDeadline := time.Now().Add(5 * time.Second); !strings.Contains(b.logs.String(), "TLS certificate reloaded"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(logDeadline) {
			t.Errorf("no reload logged 5 s after the new certificate was served; log:\n%s", b.logs.String())
			break
		}
	}
	if old, err := dial(&tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS11}); err == nil {
		old.Close()
		t.Errorf("a TLS 1.1 client completed the handshake")
	}
	t.Logf("%d calls on one keep-alive TLS connection across a certificate reload (SIGHUP), none failed", calls)
	b.stop(t, 15*time.Second)
}
