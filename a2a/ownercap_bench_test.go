package a2a

import (
	"context"
	"strconv"
	"testing"
)

// BenchmarkMemoryStoreCreate: Create into a full default store (each
// create evicts), owner-less, one owner (each create evicts its own
// oldest, with shares), 100 owners in turn; without shares
// (NewMemoryStore) and with the default ones (a Server's store). The
// churn case is the ring's worst: nine owners fill 90% of the store
// first, then one owner at its share creates (each create leaves a hole
// in the ring).
func BenchmarkMemoryStoreCreate(b *testing.B) {
	for _, c := range []struct {
		name    string
		owners  int
		shares  bool
		preload int
	}{
		{"no-owner", 0, false, 0}, {"one-owner", 1, false, 0}, {"100-owners", 100, false, 0},
		{"shares/no-owner", 0, true, 0}, {"shares/one-owner", 1, true, 0}, {"shares/100-owners", 100, true, 0},
		{"shares/churn", 1, true, 9},
	} {
		b.Run(c.name, func(b *testing.B) {
			m := NewMemoryStore(DefaultMaxTasks, 0)
			if c.shares {
				m, _ = NewMemoryStoreWith(MemoryStoreOptions{})
			}
			ctx := context.Background()
			for i := range c.preload * DefaultMaxTasks / DefaultOwnerShare {
				t := task("pre-"+strconv.Itoa(i), "hello")
				t.Owner = "other-" + strconv.Itoa(i%c.preload)
				m.Create(ctx, t)
			}
			tasks := make([]*Task, 4096)
			for i := range tasks {
				tasks[i] = task("", "hello")
				if c.owners > 0 {
					tasks[i].Owner = "https://issuer.test sub-" + strconv.Itoa(i%c.owners)
				}
			}
			ids := make([]string, 2*DefaultMaxTasks+len(tasks))
			for i := range ids {
				ids[i] = "task-" + strconv.Itoa(i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				t := tasks[i%len(tasks)]
				cp := *t
				cp.ID = ids[i%len(ids)]
				if err := m.Create(ctx, &cp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
