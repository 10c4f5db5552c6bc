//go:build amd64 && !purego

package decode

import "golang.org/x/sys/cpu"

//go:generate go -C internal/asmgen run . -out ../../stage1_amd64.s -stubs ../../stage1_stub_amd64.go -pkg decode

// stage1Kernel names the stage-1 kernel in use, for tests and benchmarks.
var stage1Kernel = "generic"

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasBMI1 && cpu.X86.HasBMI2 && cpu.X86.HasPCLMULQDQ {
		stage1 = stage1Asm
		stage2 = stage2Asm
		plain = plainAsm
		stage1Kernel = "avx2"
		simdOK = true
		stage1Kernels = append(stage1Kernels, kernel{"avx2", stage1Asm})
		if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW {
			// 64-byte vectors: stage 1 in about half the instructions.
			stage1 = stage1Asm512
			stage1Kernel = "avx512"
			stage1Kernels = append(stage1Kernels, kernel{"avx512", stage1Asm512})
		}
	}
}

// stage1Asm512 runs the AVX-512 kernel, with the checks of stage1Asm.
func stage1Asm512(buf []byte, start, nb int, out []blockMasks) {
	_ = buf[start-3 : start+64*nb]
	_ = out[:nb]
	stage1AVX512(&buf[start], nb, &out[0].quote)
}

// stage2Asm runs the assembly twin of stage2Generic.
func stage2Asm(ms []blockMasks, data []byte, c *s2carry, lastValid uint64) int {
	_ = data[:64*len(ms)]
	return stage2AVX2(&ms[0].quote, len(ms), &c.esc, lastValid, &data[0])
}

// stage1Asm runs the AVX2 kernel on the nb blocks at buf[start:],
// after checking that every byte it reads (from start-3) is in buf.
func stage1Asm(buf []byte, start, nb int, out []blockMasks) {
	_ = buf[start-3 : start+64*nb]
	_ = out[:nb]
	stage1AVX2(&buf[start], nb, &out[0].quote)
}

// plainAsm runs the assembly twin of plainGeneric.
func plainAsm(buf []byte, start, nb int) int {
	if nb == 0 {
		return 0
	}
	_ = buf[start-3 : start+64*nb]
	return plainAVX2(&buf[start], nb)
}
