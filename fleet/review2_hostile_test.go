package fleet

// Second hostile review of the fleet (2026-12-06): each test asserts what
// the package documents or an embedder needs; a failing test shows a bug.
// The first review (review_hostile_test.go) is not repeated. Two of its
// findings are documented rather than tested here: ListTasks' TotalSize
// counts the tasks of After's own millisecond that precede an After with
// a sub-millisecond part (the indexes are in milliseconds; the page
// leaves them out), and the limiter's budgets live in Redis alone, so a
// Redis restarted without its data (no RDB, no AOF) starts every client's
// budget full once (doc.go, "Redis down").

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/rpcedge/rpcedge/a2a"
	"github.com/rpcedge/rpcedge/internal/services"
)

// TestReview2CreateEvictsItself: "Bounded in count (oldest evicted)"
// (doc.go). scriptCreate adds the new task to age (scored by Redis ms)
// before it evicts past MaxTasks with ZPOPMIN: of tasks created in the
// same millisecond the one with the lowest id goes first, which can be
// the task just created. Create then reports success for a task that no
// longer exists (the a2a server answers the task, GetTask says -32001),
// and the older task stays. Measured with MaxTasks 1 and two creates
// pipelined into one millisecond ("z…" then "a…"): "a…" is evicted by
// its own create.
func TestReview2CreateEvictsItself(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "r2ce:")
	s := newStore(t, f, TaskOptions{MaxTasks: 1})
	ctx := context.Background()
	now := time.Now().UTC()
	for try := range 20 {
		var execs []rueidis.LuaExec
		ids := []string{fmt.Sprintf("z%02d", try), fmt.Sprintf("a%02d", try)}
		for _, id := range ids {
			tk := &a2a.Task{ID: id, ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: now}}
			data, _ := encodeTask(tk)
			execs = append(execs, rueidis.LuaExec{Keys: []string{s.prefix + "t:" + id}, Args: s.createArgs(tk, data)})
		}
		for i, res := range scriptCreate.ExecMulti(ctx, f.client, execs...) {
			if v, err := res.AsInt64(); err != nil || v != 1 {
				t.Fatalf("create %s: %d %v", ids[i], v, err)
			}
		}
		ok, err := s.Exists(ctx, ids[1])
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			older, _ := s.Exists(ctx, ids[0])
			t.Fatalf("try %d: the create of %s answered success, and evicted that very task (the older %s kept: %v)", try, ids[1], ids[0], older)
		}
	}
}

// TestReview2MixedTTLIndexesExpireFirst: every write sets the TTL of the
// shared keys it touches (age, exp, meta, all, the context's, the
// owner's, oa:) to its own store's TTL + 60 s, overwriting a longer one.
// Two instances with different TaskOptions.TTL (a TTL change rolled out
// instance by instance, or two configured apart) then leave the indexes
// of the longer-lived tasks set to expire before those tasks: after
// TTL+60 s without another write, a task still alive (Get finds it) is
// missing from every listing, no longer counted against MaxTasks or its
// owner's share, and never reaped from the indexes that do survive
// (meta is gone). The package says a task is "kept TTL after the last
// change" and listed while kept. Measured: task of a 1 h store, then a
// create through a 1 s store in the same context and owner: the task's
// hash 3600 s to live, its indexes and age/exp/meta 61 s.
func TestReview2MixedTTLIndexesExpireFirst(t *testing.T) {
	r := services.StartRedis(t)
	fa := newFleet(t, r, "a", "r2tl:")
	fb := newFleet(t, r, "b", "r2tl:")
	long := newStore(t, fa, TaskOptions{TTL: time.Hour})
	short := newStore(t, fb, TaskOptions{TTL: time.Second})
	ctx := context.Background()
	mk := func(id string) *a2a.Task {
		return &a2a.Task{ID: id, ContextID: "ctx", Owner: "alice", Seq: 1, Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: time.Now().UTC()}}
	}
	if err := long.Create(ctx, mk("keep")); err != nil {
		t.Fatal(err)
	}
	if err := short.Create(ctx, mk("brief")); err != nil {
		t.Fatal(err)
	}
	pttl := func(k string) int64 {
		n, err := redisDo(t, fa, "PTTL", "r2tl:{a2a}:"+k).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	task := pttl("t:keep")
	st := strconv.Itoa(int(a2a.TaskStateWorking))
	for _, k := range []string{"all", "age", "exp", "meta", "c:ctx", "o:alice", "oa:alice", "s:" + st, "co:5:alice:ctx"} {
		if p := pttl(k); p >= 0 && p < task {
			t.Errorf("index %s expires in %d s, the live task it indexes in %d s", k, p/1000, task/1000)
		}
	}
}

// TestReview2HeartbeatsOfOtherPeriods: "an instance silent for 5
// heartbeats no longer counts" (Options.Heartbeat). The heartbeat script
// drops every member older than the caller's 5 heartbeats, not the
// member's: an instance with a shorter Heartbeat than another (a change
// of the option rolled out, or two configured apart) removes the other
// between its beats, and counts a smaller fleet. Its fallback share is
// then Rate/Size of a wrong Size: with Redis down the fleet admits more
// than the limit. Measured: a (100 ms) and b (1 s, the default): a
// counts 1 instead of 2 in about half of its samples.
func TestReview2HeartbeatsOfOtherPeriods(t *testing.T) {
	r := services.StartRedis(t)
	mk := func(name string, hb time.Duration) *Fleet {
		f, err := New(Options{URL: r.URL(), Instance: name, Prefix: "r2hb:", Logger: quiet(), ProbeInterval: 50 * time.Millisecond, Heartbeat: hb})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(f.Close)
		waitUp(t, f)
		return f
	}
	a := mk("a", 100*time.Millisecond)
	mk("b", time.Second)
	time.Sleep(1200 * time.Millisecond) // both have beaten
	samples, short := 0, 0
	for deadline := time.Now().Add(1500 * time.Millisecond); time.Now().Before(deadline); samples++ {
		if a.Size() != 2 {
			short++
		}
		time.Sleep(20 * time.Millisecond)
	}
	if short > 0 {
		t.Errorf("two instances beating (every 100 ms and every 1 s): the first counted fewer than 2 in %d of %d samples", short, samples)
	}
}

// TestReview2ReadOnlyRedisIsNotDown: a Redis that became a replica (a
// failover: the URL's host demoted, as Sentinel or a managed Redis does)
// answers every write "READONLY". isDown counts LOADING, BUSY and
// MASTERDOWN as down, not READONLY: the Fleet stays "up"
// (rpcedge_fleet_redis_up 1), the probe never runs, and every task write
// fails with a plain error, which the a2a server answers as an internal
// error without Retry-After, where the package promises "While Redis is
// down task calls answer 503 / -32603 with Retry-After". Measured: Create
// answers "fleet: task store: READONLY …", not ErrStoreUnavailable, and
// Up() stays true. (OOM and MISCONF replies, a full or unwritable Redis,
// behave the same.) Fixed: such replies (refusesWrites) answer task
// calls ErrStoreUnavailable; the fleet stays up by design (reads work).
func TestReview2ReadOnlyRedisIsNotDown(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "r2ro:")
	s := newStore(t, f, TaskOptions{})
	ctx := context.Background()
	// A replica of a master that is not there: it keeps serving reads
	// (replica-serve-stale-data yes) and refuses writes.
	if _, err := r.Do("REPLICAOF", "127.0.0.1", "1"); err != nil {
		t.Fatal(err)
	}
	err := s.Create(ctx, &a2a.Task{ID: "t1", ContextID: "c", Seq: 1, Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: time.Now().UTC()}})
	t.Logf("create on a read-only replica: %v; fleet up %v", err, f.Up())
	if err == nil {
		t.Fatal("a write to a read-only replica succeeded")
	}
	// The fleet itself stays up (TestLimiterFailingRedisNotHammered:
	// reads work and the limiter backs off from a failing script): the
	// task call is what must say "unavailable".
	if !errors.Is(err, a2a.ErrStoreUnavailable) {
		t.Errorf("Redis refuses every write (READONLY): Create answered %q (unavailable: %v)",
			err, errors.Is(err, a2a.ErrStoreUnavailable))
	}
}
