package a2a

import (
	"crypto/rand"
	"encoding/hex"
)

// newID returns a random (version 4) UUID such as
// "1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b". Task ids are unguessable on
// purpose: GetTask and CancelTask have no other access control, so a task
// is reachable only by whoever was told its id.
func newID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}
