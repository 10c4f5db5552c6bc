package decode

import (
	"fmt"
	"os"
	"testing"
)

// BenchmarkThreshold decodes messages whose params hold n bytes of the
// 16k fixture's mixed JSON, with the SIMD stage and with the scalar
// scanner alone, to choose simdThreshold:
//
//	go test ./decode -run '^$' -bench Threshold -count 5 | benchstat -col /path -
func BenchmarkThreshold(b *testing.B) {
	fix, err := os.ReadFile("../../shared/testdata/bench/16k.json")
	if err != nil {
		b.Skip("fixtures not found")
	}
	// A run of whole array elements from the fixture's items.
	items := fix[bytesIndex(fix, `[{"id":0`)+1:]
	for _, n := range []int{32, 64, 128, 192, 256, 384, 512, 1024, 4096} {
		// Cut items after the element that crosses n bytes.
		depth, end := 0, 0
		inStr := false
		for i := 0; i < len(items); i++ {
			c := items[i]
			if inStr {
				if c == '\\' {
					i++
				} else if c == '"' {
					inStr = false
				}
				continue
			}
			switch c {
			case '"':
				inStr = true
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 && i >= n {
					end = i + 1
				}
			}
			if end > 0 {
				break
			}
			if depth == 0 && c == '}' && i >= n {
				end = i + 1
				break
			}
		}
		body := append([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":[`), items[:end]...)
		body = append(body, "]}"...)
		for _, path := range []string{"scalar", "simd"} {
			b.Run(fmt.Sprintf("bytes=%d/path=%s", n, path), func(b *testing.B) {
				old, oldT := simdOK, simdThreshold
				simdOK, simdThreshold = path == "simd", 0
				defer func() { simdOK, simdThreshold = old, oldT }()
				var d Decoder
				var m Message
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					if err := d.Decode(body, &m); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func bytesIndex(b []byte, s string) int {
	for i := 0; i+len(s) <= len(b); i++ {
		if string(b[i:i+len(s)]) == s {
			return i
		}
	}
	return -1
}

// BenchmarkPaths decodes the shared fixtures with the scalar scanner
// alone, with the SIMD stage on the kernel in use (avx2 where the CPU has
// it), and with the SIMD stage on the pure-Go twin, side by side:
//
//	go test ./decode -run '^$' -bench Paths -count 5 | benchstat -col /path -
func BenchmarkPaths(b *testing.B) {
	for _, name := range []string{"small", "16k", "1m"} {
		body, err := os.ReadFile("../../shared/testdata/bench/" + name + ".json")
		if err != nil {
			b.Skip("fixtures not found")
		}
		for _, path := range []string{"scalar", "simd-" + stage1Kernel, "simd-go-stage2", "simd-twin"} {
			b.Run(fmt.Sprintf("fixture=%s/path=%s", name, path), func(b *testing.B) {
				old, oldK, oldK2 := simdOK, stage1, stage2
				simdOK = path != "scalar"
				if path == "simd-go-stage2" {
					stage2 = stage2Generic
				}
				if path == "simd-generic" {
					stage1 = stage1Generic
				}
				if path == "simd-twin" {
					stage1, stage2 = stage1Generic, stage2Generic
				}
				defer func() { simdOK, stage1, stage2 = old, oldK, oldK2 }()
				var d Decoder
				d.SetOptions(Options{MaxBytes: 4 << 20})
				var m Message
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					if err := d.Decode(body, &m); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
