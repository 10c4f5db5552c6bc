//go:build !purego && (amd64 || arm64 || 386 || riscv64 || loong64 || ppc64le || wasm)

package decode

import "unsafe"

// unsafeLoads says which twin of load64 is compiled in: this one reads
// eight bytes with one unaligned load and no bounds check. The callers
// guarantee i+8 <= len(b). Build with -tags purego for the safe twin.
const unsafeLoads = true

// load64 returns the eight bytes of b at i as a little-endian uint64.
func load64(b []byte, i int) uint64 {
	return *(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i))
}
