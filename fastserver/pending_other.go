//go:build !unix

package fastserver

import "net"

// pendingBytes reports whether bytes have arrived on c that nobody has
// read yet; off Unix it cannot tell, and says none.
func pendingBytes(net.Conn) bool { return false }

// peerGone reports whether the peer of c has closed the connection; off
// Unix it cannot tell, and says no.
func peerGone(net.Conn) bool { return false }

// canPeek reports whether peek can look into c: nothing is peeked at off
// Unix.
func canPeek(net.Conn) bool { return false }
