//go:build purego || !(amd64 || arm64 || 386 || riscv64 || loong64 || ppc64le || wasm)

package decode

import "encoding/binary"

// unsafeLoads says which twin of load64 is compiled in: this one is the
// portable, bounds-checked twin.
const unsafeLoads = false

// load64 returns the eight bytes of b at i as a little-endian uint64.
func load64(b []byte, i int) uint64 {
	return binary.LittleEndian.Uint64(b[i : i+8])
}
