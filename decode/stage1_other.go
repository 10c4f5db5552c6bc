//go:build !amd64 || purego

package decode

// stage1Kernel names the stage-1 kernel in use, for tests and benchmarks.
var stage1Kernel = "generic"

// stage1Asm, stage2Asm and plainAsm are the twins where there is no assembly.
var (
	stage1Asm = stage1Generic
	stage2Asm = stage2Generic
	plainAsm  = plainGeneric
)
