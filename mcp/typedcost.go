package mcp

import (
	"reflect"
	"strconv"
)

// tooLarge is the refusal of arguments whose decoded form would pass the
// budget (internal/sonicmem's Budget).
func tooLarge(t reflect.Type, cost uint64, n int) error {
	return invalidArguments("arguments", "would take more than "+strconv.FormatUint(cost>>10, 10)+
		" KiB as the tool's Go type "+t.String()+", over its bound of 6× their "+strconv.Itoa(n)+
		" bytes + 64 KiB (contract §3 bounds a request's decoded form): send fewer values")
}
