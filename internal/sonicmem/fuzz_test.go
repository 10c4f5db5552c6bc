package sonicmem_test

import (
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/internal/sonicmem"
)

// FuzzCost walks any valid JSON, and every cut of it, with models of the
// shapes the walk distinguishes: it must not panic nor loop, must cost at
// least the copy of the input, and must allocate nothing.
func FuzzCost(f *testing.F) {
	type leaf struct {
		A int       `json:"a"`
		S string    `json:"s"`
		T time.Time `json:"t"`
	}
	type node struct {
		Kids []node            `json:"kids"`
		Any  any               `json:"any"`
		M    map[string][]leaf `json:"m"`
		P    *leaf             `json:"p"`
		N    *big.Int          `json:"n"`
		B    []byte            `json:"b"`
	}
	var models []*sonicmem.Model
	for _, typ := range []reflect.Type{reflect.TypeFor[node](), reflect.TypeFor[[]any](), reflect.TypeFor[map[int]*leaf]()} {
		m, err := sonicmem.For(typ)
		if err != nil || m == nil {
			f.Fatalf("%v: %v, %v", typ, m, err)
		}
		models = append(models, m)
	}
	for _, s := range []string{`{"kids":[{"kids":[]}],"any":{"a":[1,"x",null]},"m":{"k":[{"a":1.0,"t":"2006-01-02T15:04:05+05:31"}]},"p":{},"n":123,"b":[1,2]}`,
		`[1,{"\u0061":[[]]},"s",true]`, `{"1":{"a":1e2},"2":null}`, `{"b":"AAEC","n":"1"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, js []byte) {
		if !decode.Valid(js) {
			return
		}
		for _, m := range models {
			if c, _, _ := m.Cost(js, ^uint64(0), nil); c < sonicmem.CopyCost(len(js)) {
				t.Fatalf("cost %d under the copy of %d bytes", c, len(js))
			}
			for cut := range min(len(js), 64) {
				m.Cost(js[:len(js)-cut-1], 1<<20, nil)
			}
			if n := testing.AllocsPerRun(1, func() { m.Cost(js, 1<<30, nil) }); n != 0 {
				t.Fatalf("Cost allocated %v times", n)
			}
		}
	})
}
