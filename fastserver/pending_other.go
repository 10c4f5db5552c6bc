//go:build !unix

package fastserver

import "net"

// pendingBytes reports whether bytes have arrived on c that nobody has
// read yet; off Unix it cannot tell, and says none.
func pendingBytes(net.Conn) bool { return false }
