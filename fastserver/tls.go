package fastserver

import (
	"crypto/tls"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// KeyPair is a TLS certificate and key loaded from files, reloadable
// while the server runs: Reload reads the files again and, when they
// parse, serves the new certificate to connections that handshake from
// then on; connections already open keep theirs. Use its GetCertificate
// as tls.Config.GetCertificate. A KeyPair is safe for concurrent use.
type KeyPair struct {
	certFile, keyFile string
	cert              atomic.Pointer[tls.Certificate]
}

// LoadKeyPair loads a PEM certificate (chain) and its key; an expired
// certificate is an error.
func LoadKeyPair(certFile, keyFile string) (*KeyPair, error) {
	k := &KeyPair{certFile: certFile, keyFile: keyFile}
	if err := k.Reload(); err != nil {
		return nil, err
	}
	return k, nil
}

// Reload reads the files again. On an error (an expired certificate is
// one) the certificate served stays the one loaded before.
func (k *KeyPair) Reload() error {
	c, err := tls.LoadX509KeyPair(k.certFile, k.keyFile)
	if err != nil {
		return fmt.Errorf("fastserver: loading %s and %s: %w", k.certFile, k.keyFile, err)
	}
	// Every client that verifies would refuse an expired certificate:
	// serving one is an outage that only shows on the clients' side.
	if c.Leaf != nil && time.Now().After(c.Leaf.NotAfter) {
		return fmt.Errorf("fastserver: the certificate in %s expired at %s", k.certFile, c.Leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	k.cert.Store(&c)
	return nil
}

// GetCertificate returns the certificate loaded last; it is a
// tls.Config.GetCertificate.
func (k *KeyPair) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c := k.cert.Load()
	if c == nil {
		return nil, errors.New("fastserver: no certificate loaded")
	}
	return c, nil
}

// TLSConfig returns a server tls.Config that serves k's certificate:
// TLS 1.2 and 1.3 only, HTTP/1.1 over ALPN.
func (k *KeyPair) TLSConfig() *tls.Config {
	return &tls.Config{GetCertificate: k.GetCertificate}
}

// serverTLS returns the configuration the server serves with: a clone of
// c with TLS 1.2 as the least version and http/1.1 as the only ALPN
// protocol (fasthttp speaks HTTP/1.x).
func serverTLS(c *tls.Config) (*tls.Config, error) {
	if c == nil {
		return nil, nil
	}
	if len(c.Certificates) == 0 && c.GetCertificate == nil && c.GetConfigForClient == nil {
		return nil, errors.New("fastserver: Config.TLS has no certificate")
	}
	c = c.Clone()
	if c.MinVersion < tls.VersionTLS12 {
		c.MinVersion = tls.VersionTLS12
	}
	if c.MaxVersion != 0 && c.MaxVersion < tls.VersionTLS12 {
		return nil, errors.New("fastserver: Config.TLS allows no version from TLS 1.2 on")
	}
	c.NextProtos = []string{"http/1.1"}
	return c, nil
}
