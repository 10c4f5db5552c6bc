package fastserver

import (
	"bufio"
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/internal/testcert"
)

// writeCert writes a self-signed certificate for 127.0.0.1 with the given
// serial number and its key to dir.
func writeCert(t testing.TB, dir string, serial int64) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile, err := testcert.Write(dir, serial)
	if err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// tlsDo sends raw on c and reads one answer.
func tlsDo(t *testing.T, c *tls.Conn, raw string) *http.Response {
	t.Helper()
	c.SetDeadline(time.Now().Add(ioTimeout))
	if _, err := c.Write([]byte(raw)); err != nil {
		t.Fatalf("write: %v", err)
	}
	r, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return r
}

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := writeCert(t, dir, 1)
	kp, err := LoadKeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	_, addr := serve(t, Config{TLS: kp.TLSConfig(), DrainTimeout: 100 * time.Millisecond})
	dialTLS := func(cfg *tls.Config) (*tls.Conn, error) {
		d := &net.Dialer{Timeout: ioTimeout}
		return tls.DialWithDialer(d, "tcp", addr, cfg)
	}
	client := &tls.Config{InsecureSkipVerify: true}

	c, err := dialTLS(client)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := c.ConnectionState()
	if st.Version < tls.VersionTLS12 || st.NegotiatedProtocol != "" && st.NegotiatedProtocol != "http/1.1" {
		t.Errorf("version %x, ALPN %q", st.Version, st.NegotiatedProtocol)
	}
	if serial := st.PeerCertificates[0].SerialNumber.Int64(); serial != 1 {
		t.Errorf("serial %d, want 1", serial)
	}
	if r := tlsDo(t, c, post(pathRPC, valid)); r.StatusCode != 200 {
		t.Fatalf("over TLS: %s", r.Status)
	}

	// TLS 1.1 and older: refused at the handshake.
	if old, err := dialTLS(&tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS11}); err == nil {
		old.Close()
		t.Errorf("a TLS 1.1 client completed the handshake")
	}

	// Reload: new connections get the new certificate; the open one goes on.
	writeCert(t, dir, 2)
	if err := kp.Reload(); err != nil {
		t.Fatal(err)
	}
	c2, err := dialTLS(client)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if serial := c2.ConnectionState().PeerCertificates[0].SerialNumber.Int64(); serial != 2 {
		t.Errorf("after Reload: serial %d, want 2", serial)
	}
	if r := tlsDo(t, c, post(pathRPC, valid)); r.StatusCode != 200 {
		t.Errorf("the connection opened before the reload: %s", r.Status)
	}
	// A reload that fails keeps the certificate served.
	os.WriteFile(certFile, []byte("not a certificate"), 0o600)
	if err := kp.Reload(); err == nil {
		t.Errorf("Reload of a broken file succeeded")
	}
	c3, err := dialTLS(client)
	if err != nil {
		t.Fatalf("after a failed reload: %v", err)
	}
	c3.Close()

	// An early answer over TLS: the client reads it before the close.
	c4, err := dialTLS(client)
	if err != nil {
		t.Fatal(err)
	}
	defer c4.Close()
	raw := post(pathRPC, valid+string(make([]byte, 3000)), "Content-Type: text/plain")
	if r := tlsDo(t, c4, raw[:len(raw)-2000]); r.StatusCode != 415 {
		t.Errorf("early answer over TLS: %s, want 415", r.Status)
	}
}

func TestTLSConfigErrors(t *testing.T) {
	if _, err := New(Config{TLS: &tls.Config{}}, testEndpoints(nil)...); err == nil {
		t.Errorf("a TLS config without a certificate was accepted")
	}
	if _, err := New(Config{TLS: &tls.Config{GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return nil, nil }, MaxVersion: tls.VersionTLS11}}, testEndpoints(nil)...); err == nil {
		t.Errorf("a TLS config capped at 1.1 was accepted")
	}
	if _, err := LoadKeyPair("/nonexistent/cert.pem", "/nonexistent/key.pem"); err == nil {
		t.Errorf("LoadKeyPair of missing files succeeded")
	}
}

// Run listens on Config.Addr, logs where, serves until its context ends,
// then shuts down gracefully and returns nil.
func TestRun(t *testing.T) {
	logs := newSyncBuf()
	s, err := New(Config{Addr: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(logs, nil))}, testEndpoints(nil)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var addr string
	waitFor(t, "the listening line", func() bool {
		m := regexp.MustCompile(`addr=http://(\S+)`).FindStringSubmatch(logs.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	})
	want{200, 0, "7", `{"a":1}`, ""}.check(t, roundTrip(t, addr, post(pathRPC, valid)))
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run returned %v after its context ended", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Errorf("still listening after Run returned")
	}
}
