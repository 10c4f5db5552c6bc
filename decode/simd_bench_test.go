package decode

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// thresholdElems are array elements in the style of the shared fixtures:
// numbers in every form, escapes, non-ASCII, literals, nesting.
var thresholdElems = []string{
	`{"id":7,"name":"item-7","price":-793,"delta":285.3447,"ok":true,"missing":null}`,
	`["\u00e9t\u00e9 Здравствуйте",9.700E+20,-5.415192e-08,false]`,
	`{"tags":["\ud83d\ude00 surrogate","日本語テキスト","gamma"],"flags":[true,false,null]}`,
	`"plain words for padding quote \"inner\" slash \/ path"`,
	`{"deep":{"a":{"b":{"c":["Здравствуйте",{"d":135258}]}}},"empty":{},"none":[]}`,
}

// BenchmarkThreshold decodes messages whose params array holds about n
// bytes of fixture-like JSON, with the SIMD stage (threshold 0) and with
// the scalar scanner alone, to choose simdThreshold:
//
//	go test ./decode -run '^$' -bench Threshold -count 6 | benchstat -col /path -
func BenchmarkThreshold(b *testing.B) {
	for _, n := range []int{64, 128, 256, 384, 512, 768, 1024, 2048, 4096} {
		body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":[`)
		start := len(body)
		for i := 0; len(body)-start < n; i++ {
			if i > 0 {
				body = append(body, ',')
			}
			body = append(body, thresholdElems[i%len(thresholdElems)]...)
		}
		body = append(body, "]}"...)
		for _, path := range []string{"scalar", "simd"} {
			b.Run(fmt.Sprintf("bytes=%d/path=%s", n, path), func(b *testing.B) {
				old, oldT := simdOK, simdThreshold
				simdOK, simdThreshold = path == "simd" && old, 0
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
		paths := []string{"scalar"}
		for _, k := range stage1Kernels {
			paths = append(paths, "simd-"+k.name)
		}
		paths = append(paths, "simd-go-stage2", "simd-twin")
		for _, path := range paths {
			b.Run(fmt.Sprintf("fixture=%s/path=%s", name, path), func(b *testing.B) {
				old, oldK, oldK2 := simdOK, stage1, stage2
				simdOK = path != "scalar"
				if path == "simd-go-stage2" {
					stage2 = stage2Generic
				}
				for _, k := range stage1Kernels {
					if path == "simd-"+k.name {
						stage1 = k.fn
					}
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

// longTexts are the string contents of BenchmarkLongString, by kind.
var longTexts = map[string]func(n int) []byte{
	// A sentence repeated: the size sweep's text.
	"ascii": func(n int) []byte {
		s := "The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs!! "
		return []byte(strings.Repeat(s, n/len(s)+1)[:n])
	},
	// Source code: a \n about every 40 bytes, a \" and a \\ now and then.
	"escapes": func(n int) []byte {
		s := `func f(x int) string {\n\tif x > 0 {\n\t\treturn \"pos\\n\"\n\t}\n\treturn fmt.Sprint(x)\n}\n`
		return []byte(strings.Repeat(s, n/len(s)+1)[:n])
	},
	// French prose: a two-byte letter about every 30 bytes.
	"utf8": func(n int) []byte {
		s := "L'été dernier, nous sommes allés à la mer; la côte était très belle. "
		b := []byte(strings.Repeat(s, n/len(s)+2))
		for b = b[:n]; b[len(b)-1] >= 0x80; b = b[:len(b)-1] {
		}
		return b
	},
}

// BenchmarkLongString decodes a tools/call whose one argument is a long
// string of each kind (plain-run skip: ascii and escapes skip most
// blocks, utf8 none):
//
//	go test ./decode -run '^$' -bench LongString -count 6
func BenchmarkLongString(b *testing.B) {
	for _, kind := range []string{"ascii", "escapes", "utf8"} {
		for _, n := range []int{16 << 10, 256 << 10} {
			body := append([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`), longTexts[kind](n)...)
			body = append(body, `"}}}`...)
			b.Run(fmt.Sprintf("text=%s/bytes=%dk", kind, n>>10), func(b *testing.B) {
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
