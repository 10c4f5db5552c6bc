package memtest

import (
	"bytes"
	"net"
	"time"
)

// Conn is a net.Conn over two buffers, for serving pipelined requests
// without a network: a server's ServeConn reads what was written to R
// until it is empty, then sees io.EOF, and writes its answers to W. Its
// addresses are loopback; its deadlines do nothing.
type Conn struct{ R, W bytes.Buffer }

var connAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}

// Read reads from R.
func (c *Conn) Read(p []byte) (int, error) { return c.R.Read(p) }

// Write writes to W.
func (c *Conn) Write(p []byte) (int, error) { return c.W.Write(p) }

// Close does nothing.
func (c *Conn) Close() error { return nil }

// LocalAddr returns 127.0.0.1:40000.
func (c *Conn) LocalAddr() net.Addr { return connAddr }

// RemoteAddr returns 127.0.0.1:40000.
func (c *Conn) RemoteAddr() net.Addr { return connAddr }

// SetDeadline does nothing.
func (c *Conn) SetDeadline(time.Time) error { return nil }

// SetReadDeadline does nothing.
func (c *Conn) SetReadDeadline(time.Time) error { return nil }

// SetWriteDeadline does nothing.
func (c *Conn) SetWriteDeadline(time.Time) error { return nil }
