package fleet

// NOTE: the tests of the byte bounds (TaskOptions.MaxBytes and
// MaxOwnerBytes; tb and ob in Redis). Before 2026-12-07 the store bounded
// tasks by count alone: one owner could keep MaxOwnerTasks tasks of
// MaxTaskBytes each, 10 GiB of Redis by default.

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/a2a"
	"github.com/rpcedge/rpcedge/internal/services"
)

// sizedTask is a task of owner o whose JSON is about n bytes (its
// metadata padded).
func sizedTask(id, o string, n int) *a2a.Task {
	pad := strings.Repeat("x", max(0, n-200))
	return &a2a.Task{ID: id, ContextID: "c" + strconv.Itoa(len(id)%3), Owner: o,
		Status:   a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: time.Now()},
		Metadata: json.RawMessage(`{"pad":"` + pad + `"}`)}
}

// byteSums reads tb and ob, and sums the stored data of the live tasks,
// in all and per owner, as Redis holds them.
func byteSums(t *testing.T, f *Fleet, s *TaskStore) (tb int64, ob map[string]int64, live int64, liveBy map[string]int64) {
	t.Helper()
	tb, _ = redisDo(t, f, "GET", s.prefix+"tb").AsInt64()
	ob = map[string]int64{}
	m, _ := redisDo(t, f, "HGETALL", s.prefix+"ob").AsStrMap()
	for k, v := range m {
		ob[k], _ = strconv.ParseInt(v, 10, 64)
	}
	liveBy = map[string]int64{}
	ids, _ := redisDo(t, f, "ZRANGE", s.prefix+"all", "0", "-1").AsStrSlice()
	for _, id := range ids {
		h, _ := redisDo(t, f, "HMGET", s.prefix+"t:"+id, "d", "o").ToArray()
		if len(h) < 2 {
			continue
		}
		d, err := h[0].ToString()
		if err != nil {
			continue // expired, not yet forgotten
		}
		o, _ := h[1].ToString()
		live += int64(len(d))
		if o != "" {
			liveBy[o] += int64(len(d))
		}
	}
	return tb, ob, live, liveBy
}

// TestOwnerBytesBound fills one owner's byte bound with creates and
// updates that grow tasks: the owner's oldest go, never the task written
// nor another owner's, and the sums stay those of the tasks kept.
func TestOwnerBytesBound(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "ob:")
	const taskMax, ownerMax = 8 << 10, 40 << 10
	s := newStore(t, f, TaskOptions{MaxTaskBytes: taskMax, MaxOwnerBytes: ownerMax, MaxBytes: 1 << 20})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(rand.Uint64(), 7))
	if err := s.Create(ctx, sizedTask("bob-1", "bob", 6000)); err != nil {
		t.Fatal(err)
	}
	var created []string
	for i := range 30 {
		id := "al-" + strconv.Itoa(i)
		if err := s.Create(ctx, sizedTask(id, "alice", 2000+rng.IntN(5000))); err != nil {
			t.Fatal(err)
		}
		created = append(created, id)
		time.Sleep(time.Millisecond) // creation order by milliseconds
		if _, err := s.Get(ctx, id); err != nil {
			t.Fatalf("%s, just created: %v", id, err)
		}
		tb, ob, live, liveBy := byteSums(t, f, s)
		if ob["alice"] > ownerMax {
			t.Fatalf("after %s: alice holds %d bytes, over %d", id, ob["alice"], ownerMax)
		}
		if tb != live || ob["alice"] != liveBy["alice"] || ob["bob"] != liveBy["bob"] {
			t.Fatalf("after %s: sums tb %d, ob %v; the tasks kept hold %d, %v", id, tb, ob, live, liveBy)
		}
	}
	if _, err := s.Get(ctx, "bob-1"); err != nil {
		t.Errorf("bob's task: %v (alice's bytes evicted another owner's task)", err)
	}
	if _, err := s.Get(ctx, created[0]); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("alice's oldest: %v, want evicted", err)
	}
	// An update that grows alice's newest past her bound evicts her
	// oldest, never the task updated.
	last := created[len(created)-1]
	if _, err := s.Update(ctx, last, func(o *a2a.Task) (*a2a.Task, error) {
		n := *o
		n.Metadata = json.RawMessage(`{"pad":"` + strings.Repeat("y", taskMax-300) + `"}`)
		return &n, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, last); err != nil {
		t.Errorf("the task updated: %v", err)
	}
	tb, ob, live, liveBy := byteSums(t, f, s)
	if ob["alice"] > ownerMax || tb != live || ob["alice"] != liveBy["alice"] {
		t.Errorf("after the growing update: tb %d, ob %v; kept %d, %v", tb, ob, live, liveBy)
	}
	// A shrinking update evicts nothing and gives bytes back.
	n0, _ := redisDo(t, f, "ZCARD", s.prefix+"oa:alice").AsInt64()
	if _, err := s.Update(ctx, last, func(o *a2a.Task) (*a2a.Task, error) {
		n := *o
		n.Metadata = nil
		return &n, nil
	}); err != nil {
		t.Fatal(err)
	}
	if n1, _ := redisDo(t, f, "ZCARD", s.prefix+"oa:alice").AsInt64(); n1 != n0 {
		t.Errorf("a shrinking update changed alice's tasks: %d → %d", n0, n1)
	}
	if tb2, ob2, live2, _ := byteSums(t, f, s); tb2 != live2 || ob2["alice"] >= ob["alice"] {
		t.Errorf("after the shrinking update: tb %d (kept %d), alice %d (was %d)", tb2, live2, ob2["alice"], ob["alice"])
	}
}

// TestTotalBytesBound fills MaxBytes with many owners' tasks: the oldest
// of all go, and the sums stay those of the tasks kept; when the tasks
// expire, the reaper takes the sums back to nothing.
func TestTotalBytesBound(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "tb:")
	const taskMax, total = 8 << 10, 64 << 10
	s := newStore(t, f, TaskOptions{TTL: 2 * time.Second, MaxTaskBytes: taskMax, MaxBytes: total, MaxOwnerBytes: total})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(rand.Uint64(), 8))
	for i := range 40 {
		o := []string{"", "ann", "ben", "cy"}[rng.IntN(4)]
		id := "t-" + strconv.Itoa(i)
		if err := s.Create(ctx, sizedTask(id, o, 1000+rng.IntN(6000))); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
		tb, ob, live, liveBy := byteSums(t, f, s)
		if tb > total || tb != live {
			t.Fatalf("after %s: tb %d (bound %d), the tasks kept hold %d", id, tb, total, live)
		}
		for _, o := range []string{"ann", "ben", "cy"} {
			if ob[o] != liveBy[o] {
				t.Fatalf("after %s: %s's sum %d, its tasks hold %d", id, o, ob[o], liveBy[o])
			}
		}
	}
	if _, err := s.Get(ctx, "t-0"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("the oldest task: %v, want evicted", err)
	}
	if _, err := s.Get(ctx, "t-39"); err != nil {
		t.Errorf("the newest task: %v", err)
	}
	// Expired and reaped: nothing counted.
	deadline := time.Now().Add(15 * time.Second)
	for {
		tb, ob, _, _ := byteSums(t, f, s)
		if tb == 0 && len(ob) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("15 s after the tasks expired: tb %d, ob %v", tb, ob)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestBytesOfOlderTasks: a task whose meta entry has no size (written by
// a release before the byte bounds) is not counted, and counted whole
// from its next update on.
func TestBytesOfOlderTasks(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "ot:")
	s := newStore(t, f, TaskOptions{})
	ctx := context.Background()
	if err := s.Create(ctx, sizedTask("old", "dee", 3000)); err != nil {
		t.Fatal(err)
	}
	// As the older release left it: meta without the size, sums without
	// the task.
	m, _ := redisDo(t, f, "HGET", s.prefix+"meta", "old").ToString()
	if !strings.HasPrefix(m, "=") {
		t.Fatalf("meta entry %q: no size", m)
	}
	redisDo(t, f, "HSET", s.prefix+"meta", "old", m[strings.IndexByte(m, ':')+1:])
	redisDo(t, f, "DEL", s.prefix+"tb", s.prefix+"ob")
	if _, err := s.Update(ctx, "old", func(o *a2a.Task) (*a2a.Task, error) {
		n := *o
		n.Status.State = a2a.TaskStateInputRequired
		return &n, nil
	}); err != nil {
		t.Fatal(err)
	}
	tb, ob, live, liveBy := byteSums(t, f, s)
	if tb != live || ob["dee"] != liveBy["dee"] || live == 0 {
		t.Errorf("after the update: tb %d, ob %v; kept %d, %v", tb, ob, live, liveBy)
	}
}

// TestByteOptions checks the options' defaults and refusals.
func TestByteOptions(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "bo:")
	s := newStore(t, f, TaskOptions{})
	if s.maxT != strconv.Itoa(DefaultMaxBytes) || s.maxOB != strconv.Itoa(DefaultMaxBytes/DefaultOwnerShare) {
		t.Errorf("defaults: %s, %s", s.maxT, s.maxOB)
	}
	for _, o := range []TaskOptions{
		{MaxBytes: -1}, {MaxOwnerBytes: -1},
		{MaxTaskBytes: 1 << 20, MaxBytes: 1 << 19},
		{MaxTaskBytes: 1 << 20, MaxOwnerBytes: 1 << 19},
		{MaxBytes: 1 << 20, MaxOwnerBytes: 1 << 21},
	} {
		if _, err := f.TaskStore(o); err == nil {
			t.Errorf("%+v: accepted", o)
		}
	}
}
