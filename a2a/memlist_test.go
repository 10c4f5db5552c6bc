package a2a

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkMemoryStoreList: a page of a full default store (10,000
// tasks), the first and a later page, without and with a filter.
func BenchmarkMemoryStoreList(b *testing.B) {
	m := NewMemoryStore(DefaultMaxTasks, 0)
	base := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	states := []TaskState{TaskStateWorking, TaskStateCompleted, TaskStateCanceled, TaskStateFailed}
	for i := range DefaultMaxTasks {
		t := &Task{ID: fmt.Sprintf("task-%05d", i), ContextID: fmt.Sprintf("ctx-%d", i%10),
			Status: TaskStatus{State: states[i%len(states)], Timestamp: base.Add(time.Duration(i*7%5000) * time.Millisecond)}}
		if err := m.Create(context.Background(), t); err != nil {
			b.Fatal(err)
		}
	}
	first, err := m.List(context.Background(), TaskQuery{PageSize: 50})
	if err != nil || len(first.Tasks) != 50 {
		b.Fatal(err, len(first.Tasks))
	}
	for _, bc := range []struct {
		name string
		q    TaskQuery
	}{
		{"all", TaskQuery{PageSize: 50}},
		{"all-page2", TaskQuery{PageSize: 50, PageToken: first.NextPageToken}},
		{"state", TaskQuery{PageSize: 50, State: TaskStateCanceled}},
		{"context-state", TaskQuery{PageSize: 50, ContextID: "ctx-3", State: TaskStateWorking}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.List(context.Background(), bc.q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestMemoryStoreListModel pages random queries through a store whose
// tasks share status times (ties ordered by id) and compares every page
// and total with the matches sorted whole, as the store listed them
// before it kept only a page's candidates.
func TestMemoryStoreListModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	base := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	states := []TaskState{TaskStateWorking, TaskStateCompleted, TaskStateCanceled}
	for round := range 20 {
		m := NewMemoryStore(500, 0)
		var all []*Task
		for i := range 300 + rng.IntN(400) { // past 500: the oldest evicted
			tk := &Task{ID: fmt.Sprintf("t%x-%d", rng.Uint32(), i), ContextID: fmt.Sprintf("c%d", rng.IntN(3)), Owner: fmt.Sprintf("o%d", rng.IntN(2)),
				Status: TaskStatus{State: states[rng.IntN(len(states))], Timestamp: base.Add(time.Duration(rng.IntN(40)) * time.Millisecond)}}
			if err := m.Create(context.Background(), tk); err != nil {
				t.Fatal(err)
			}
			all = append(all, tk)
		}
		if len(all) > 500 {
			all = all[len(all)-500:]
		}
		for range 10 {
			q := TaskQuery{PageSize: 1 + rng.IntN(60)}
			if rng.IntN(2) == 0 {
				q.ContextID = fmt.Sprintf("c%d", rng.IntN(3))
			}
			if rng.IntN(2) == 0 {
				q.Owner = fmt.Sprintf("o%d", rng.IntN(2))
			}
			if rng.IntN(2) == 0 {
				q.State = states[rng.IntN(len(states))]
			}
			if rng.IntN(3) == 0 {
				q.After = base.Add(time.Duration(rng.IntN(40)) * time.Millisecond)
			}
			var want []*Task
			for _, tk := range all {
				if q.Matches(tk) {
					want = append(want, tk)
				}
			}
			slices.SortFunc(want, func(a, b *Task) int {
				if c := cmp.Compare(b.Status.Timestamp.UnixMilli(), a.Status.Timestamp.UnixMilli()); c != 0 {
					return c
				}
				return strings.Compare(b.ID, a.ID)
			})
			var got []*Task
			for pages := 0; ; pages++ {
				p, err := m.List(context.Background(), q)
				if err != nil {
					t.Fatal(err)
				}
				if p.TotalSize != len(want) {
					t.Fatalf("round %d %+v: total %d, want %d", round, q, p.TotalSize, len(want))
				}
				if len(p.Tasks) > q.PageSize || pages > len(want) {
					t.Fatalf("round %d %+v: page of %d", round, q, len(p.Tasks))
				}
				got = append(got, p.Tasks...)
				if p.NextPageToken == "" {
					break
				}
				q.PageToken = p.NextPageToken
			}
			if len(got) != len(want) {
				t.Fatalf("round %d %+v: %d listed, want %d", round, q, len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("round %d %+v: task %d is %s, want %s", round, q, i, got[i].ID, want[i].ID)
				}
			}
		}
	}
}
