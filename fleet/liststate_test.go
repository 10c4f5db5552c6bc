package fleet

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/rpcedge/rpcedge/a2a"
	"github.com/rpcedge/rpcedge/internal/services"
)

// NOTE: the tests of ListTasks' per-state indexes.
//
// A listing with a status filter (or a context and an owner) reads one
// index that holds exactly its matches, so its cost follows the page, not
// the scope. TestListStateModel checks totals and pages against a
// brute-force model over random creates, updates, state changes,
// evictions, expiries and prunes, and then the index layout itself;
// TestListStateCost counts the commands Redis runs for such a listing of
// 50,000 tasks (the old script ran an HMGET per task in scope).

// newSlowFleet is newFleet with a call timeout long enough for the
// bulk loads of these tests (and for the old, O(scope) script, so that
// the cost test fails on its counts rather than on a timeout).
func newSlowFleet(t *testing.T, r *services.Redis, prefix string) *Fleet {
	t.Helper()
	f, err := New(Options{URL: r.URL(), Instance: "a", Prefix: prefix, Logger: quiet(),
		Timeout: 20 * time.Second, ProbeInterval: 50 * time.Millisecond, Heartbeat: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	waitUp(t, f)
	return f
}

// bulkCreate stores tasks through scriptCreate, pipelined in chunks (one
// round trip per chunk instead of per task).
func bulkCreate(t testing.TB, s *TaskStore, tasks []*a2a.Task) {
	t.Helper()
	ctx := context.Background()
	for len(tasks) > 0 {
		n := min(len(tasks), 2000)
		execs := make([]rueidis.LuaExec, n)
		for i, tk := range tasks[:n] {
			data, err := encodeTask(tk)
			if err != nil {
				t.Fatal(err)
			}
			execs[i] = rueidis.LuaExec{Keys: []string{s.prefix + "t:" + tk.ID}, Args: s.createArgs(tk, data)}
		}
		for i, r := range scriptCreate.ExecMulti(ctx, s.f.client, execs...) {
			if v, err := r.AsInt64(); err != nil || v != 1 {
				t.Fatalf("create %s: %d %v", tasks[i].ID, v, err)
			}
		}
		tasks = tasks[n:]
	}
}

// redisDo runs one command on f's client.
func redisDo(t testing.TB, f *Fleet, args ...string) rueidis.RedisResult {
	t.Helper()
	return f.client.Do(context.Background(), f.client.B().Arbitrary(args[0]).Args(args[1:]...).Build())
}

// cmdStats is INFO commandstats: calls and µs by command.
func cmdStats(t testing.TB, f *Fleet) (calls, usec map[string]int64) {
	t.Helper()
	s, err := redisDo(t, f, "INFO", "commandstats").ToString()
	if err != nil {
		t.Fatal(err)
	}
	calls, usec = map[string]int64{}, map[string]int64{}
	for _, line := range strings.Split(s, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		name = strings.TrimPrefix(name, "cmdstat_")
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				calls[name] = n
			case "usec":
				usec[name] = n
			}
		}
	}
	return calls, usec
}

// inScript counts the commands a script ran, from commandstats since the
// last CONFIG RESETSTAT (the script call itself and the stats calls left
// out).
func inScript(calls map[string]int64) (n int64) {
	for k, v := range calls {
		switch k {
		case "evalsha", "eval", "info", "config|resetstat", "script|load":
		default:
			n += v
		}
	}
	return n
}

// listAll pages through q, returning the ids in order and the total of
// the first page.
func listAll(t *testing.T, s *TaskStore, q a2a.TaskQuery) (ids []string, total int) {
	t.Helper()
	ctx := context.Background()
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatalf("List(%+v) never ended", q)
		}
		p, err := s.List(ctx, q)
		if err != nil {
			t.Fatalf("List(%+v): %v", q, err)
		}
		if len(p.Tasks) > q.PageSize {
			t.Fatalf("List(%+v): %d tasks", q, len(p.Tasks))
		}
		if pages == 0 {
			total = p.TotalSize
		}
		for _, tk := range p.Tasks {
			ids = append(ids, tk.ID)
		}
		if p.NextPageToken == "" {
			return ids, total
		}
		q.PageToken = p.NextPageToken
	}
}

// mtask is the model of one stored task.
type mtask struct {
	ctx, own string
	st       a2a.TaskState
	ms       int64
}

// wantKeys is the layout of the task indexes, written out independently
// of the scripts: every index a task of (ctx, own, st) belongs to.
func wantKeys(prefix string, m mtask) map[string]bool {
	st := strconv.Itoa(int(m.st))
	out := map[string]bool{prefix + "all": true, prefix + "s:" + st: true}
	if m.ctx != "" {
		out[prefix+"c:"+m.ctx] = true
		out[prefix+"cs:"+st+":"+m.ctx] = true
	}
	if m.own != "" {
		out[prefix+"o:"+m.own] = true
		out[prefix+"os:"+st+":"+m.own] = true
		if m.ctx != "" {
			co := strconv.Itoa(len(m.own)) + ":" + m.own + ":" + m.ctx
			out[prefix+"co:"+co] = true
			out[prefix+"cos:"+st+":"+co] = true
		}
	}
	return out
}

func TestListStateModel(t *testing.T) {
	r := services.StartRedis(t)
	f := newSlowFleet(t, r, "lm:")
	const maxTasks = 60
	s := newStore(t, f, TaskOptions{MaxTasks: maxTasks})
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))

	// Owners and contexts that would share a key if the (context, owner)
	// keys were not length-prefixed: ("a:b", "c") and ("a", "b:c").
	ctxs := []string{"c", "b:c", "ctx-2", "x"}
	owners := []string{"", "a", "a:b", "bob"}
	states := []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateWorking,
		a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired, a2a.TaskStateCompleted, a2a.TaskStateCanceled}
	// Status times two days past, beyond the TTL (a day): an expired
	// task's entries are then past the prune cut at once, and the totals
	// are exact. (A task that expired within the cut's margin of 5 s is
	// still counted, and skipped by the page walk.)
	base := time.Now().Add(-48 * time.Hour).UnixMilli()
	model := map[string]mtask{}
	expired := map[string]bool{} // hash deleted under the scripts' feet
	gone := map[string]bool{}    // evicted by a create
	next := 0
	newID := func() string {
		next++
		switch rng.IntN(3) {
		case 0:
			return fmt.Sprintf("t%d", next)
		case 1:
			return fmt.Sprintf("T-%06d-%x", next, rng.Uint32())
		}
		return fmt.Sprintf("%d:id", next)
	}
	// refresh drops the model's tasks a create evicted.
	refresh := func() {
		ids := make([]string, 0, len(model))
		for id := range model {
			ids = append(ids, id)
		}
		cmds := make(rueidis.Commands, len(ids))
		for i, id := range ids {
			cmds[i] = f.client.B().Exists().Key(s.prefix + "t:" + id).Build()
		}
		for i, res := range f.client.DoMulti(ctx, cmds...) {
			if n, err := res.AsInt64(); err != nil {
				t.Fatal(err)
			} else if n == 0 {
				delete(model, ids[i])
				gone[ids[i]] = true
			}
		}
		if len(model) > maxTasks {
			t.Fatalf("%d tasks kept, MaxTasks %d", len(model), maxTasks)
		}
	}
	pick := func() (string, bool) {
		if len(model) == 0 {
			return "", false
		}
		ids := make([]string, 0, len(model))
		for id := range model {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return ids[rng.IntN(len(ids))], true
	}
	check := func(q a2a.TaskQuery) {
		t.Helper()
		var want []string
		type e struct {
			id string
			ms int64
		}
		var es []e
		after := int64(-1 << 62)
		if !q.After.IsZero() {
			after = q.After.UnixMilli()
		}
		for id, m := range model {
			if (q.ContextID == "" || m.ctx == q.ContextID) && (q.Owner == "" || m.own == q.Owner) &&
				(q.State == 0 || m.st == q.State) && m.ms >= after {
				es = append(es, e{id, m.ms})
			}
		}
		slices.SortFunc(es, func(a, b e) int {
			if c := cmp.Compare(b.ms, a.ms); c != 0 {
				return c
			}
			return strings.Compare(b.id, a.id)
		})
		for _, x := range es {
			want = append(want, x.id)
		}
		got, total := listAll(t, s, q)
		if !slices.Equal(got, want) || total != len(want) {
			t.Fatalf("List(ctx %q owner %q state %d after %v size %d):\n total %d, %v\nwant %d, %v",
				q.ContextID, q.Owner, q.State, q.After, q.PageSize, total, got, len(want), want)
		}
	}
	randomQuery := func() a2a.TaskQuery {
		q := a2a.TaskQuery{PageSize: 1 + rng.IntN(7)}
		if rng.IntN(2) == 0 {
			q.ContextID = ctxs[rng.IntN(len(ctxs))]
		}
		if rng.IntN(2) == 0 {
			q.Owner = owners[1+rng.IntN(len(owners)-1)]
		}
		if rng.IntN(3) > 0 {
			q.State = states[rng.IntN(len(states))]
		}
		if rng.IntN(4) == 0 {
			q.After = time.UnixMilli(base + int64(rng.IntN(40)))
		}
		return q
	}
	for op := range 700 {
		switch k := rng.IntN(20); {
		case k < 9: // create
			id := newID()
			m := mtask{ctx: ctxs[rng.IntN(len(ctxs))], own: owners[rng.IntN(len(owners))],
				st: states[rng.IntN(len(states))], ms: base + int64(rng.IntN(60))}
			tk := &a2a.Task{ID: id, ContextID: m.ctx, Owner: m.own,
				Status: a2a.TaskStatus{State: m.st, Timestamp: time.UnixMilli(m.ms)}}
			if err := s.Create(ctx, tk); err != nil {
				t.Fatal(err)
			}
			model[id] = m
			refresh()
		case k < 15: // update, mostly a change of state
			id, ok := pick()
			if !ok {
				continue
			}
			m := model[id]
			nst := m.st
			if rng.IntN(4) > 0 {
				nst = states[rng.IntN(len(states))]
			}
			nms := base + int64(rng.IntN(60))
			_, err := s.Update(ctx, id, func(o *a2a.Task) (*a2a.Task, error) {
				n := *o
				n.Status = a2a.TaskStatus{State: nst, Timestamp: time.UnixMilli(nms)}
				return &n, nil
			})
			if m.st.Final() {
				if !errors.Is(err, a2a.ErrTaskFinal) {
					t.Fatalf("update of final %s: %v", id, err)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			m.st, m.ms = nst, nms
			model[id] = m
		case k < 16: // expiry: the hash goes, its index entries stay
			id, ok := pick()
			if !ok {
				continue
			}
			if err := redisDo(t, f, "DEL", s.prefix+"t:"+id).Error(); err != nil {
				t.Fatal(err)
			}
			// Its time in the expiry index passed (as it has when a
			// hash expires by its TTL): the next script's reap forgets
			// it. (Before the expiry index, the listings' prune did,
			// by the status times of two days past.)
			if err := redisDo(t, f, "ZADD", s.prefix+"exp", "0", id).Error(); err != nil {
				t.Fatal(err)
			}
			delete(model, id)
			expired[id] = true
		case k < 17: // a create of an existing id is refused
			id, ok := pick()
			if !ok {
				continue
			}
			if err := s.Create(ctx, &a2a.Task{ID: id, ContextID: "c"}); err == nil {
				t.Fatalf("create of existing %s succeeded", id)
			}
		default:
			check(randomQuery())
		}
		if op%50 == 49 {
			// every scope and state, one after another
			for _, c := range append([]string{""}, ctxs...) {
				for _, o := range owners {
					for _, st := range []a2a.TaskState{0, a2a.TaskStateWorking, a2a.TaskStateInputRequired} {
						check(a2a.TaskQuery{ContextID: c, Owner: o, State: st, PageSize: 4})
					}
				}
			}
		}
	}
	checkLayout(t, f, s, model, expired)
	// The evicted are in no index at all.
	for id := range gone {
		if expired[id] {
			continue
		}
		if where := indexesHolding(t, f, s, id); len(where) > 0 {
			t.Errorf("evicted %s still in %v", id, where)
		}
	}
}

// zsets lists the task indexes of s: every sorted set under its prefix
// but the creation orders (all tasks' and each owner's) and the expiry
// index.
func zsets(t *testing.T, f *Fleet, s *TaskStore) []string {
	t.Helper()
	keys, err := redisDo(t, f, "KEYS", s.prefix+"*").AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range keys {
		if typ, _ := redisDo(t, f, "TYPE", k).ToString(); typ == "zset" && k != s.prefix+"age" && k != s.prefix+"exp" && !strings.HasPrefix(k, s.prefix+"oa:") {
			out = append(out, k)
		}
	}
	return out
}

// oaKeys lists the owners' creation orders of s.
func oaKeys(t *testing.T, f *Fleet, s *TaskStore) []string {
	t.Helper()
	keys, err := redisDo(t, f, "KEYS", s.prefix+"oa:*").AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func indexesHolding(t *testing.T, f *Fleet, s *TaskStore, id string) (where []string) {
	t.Helper()
	for _, k := range append(append(zsets(t, f, s), s.prefix+"age", s.prefix+"exp"), oaKeys(t, f, s)...) {
		if err := redisDo(t, f, "ZSCORE", k, id).Error(); err == nil {
			where = append(where, k)
		}
	}
	if ok, _ := redisDo(t, f, "HEXISTS", s.prefix+"meta", id).AsBool(); ok {
		where = append(where, s.prefix+"meta")
	}
	return where
}

// checkLayout: every index has a TTL; every live task is in exactly its
// indexes, scored by its status time; an entry of a task that is not live is one whose hash
// expired (left for pruning), never one of an evicted task.
func checkLayout(t *testing.T, f *Fleet, s *TaskStore, model map[string]mtask, expired map[string]bool) {
	t.Helper()
	seen := map[string]map[string]bool{}
	for _, k := range append(zsets(t, f, s), s.prefix+"age", s.prefix+"exp") {
		// every index goes by itself some time after its last change
		if ttl, err := redisDo(t, f, "TTL", k).AsInt64(); err != nil || ttl <= 0 {
			t.Errorf("%s: TTL %d %v, want one", k, ttl, err)
		}
		if k == s.prefix+"age" || k == s.prefix+"exp" {
			continue
		}
		members, err := redisDo(t, f, "ZRANGE", k, "0", "-1", "WITHSCORES").AsZScores()
		if err != nil {
			t.Fatal(err)
		}
		for _, zs := range members {
			id, score := zs.Member, strconv.FormatFloat(zs.Score, 'f', -1, 64)
			m, live := model[id]
			if !live {
				if !expired[id] {
					t.Errorf("%s holds %s, neither live nor expired", k, id)
				}
				continue
			}
			if !wantKeys(s.prefix, m)[k] {
				t.Errorf("%s holds %s (%+v), not one of its indexes", k, id, m)
			}
			if score != strconv.FormatInt(m.ms, 10) {
				t.Errorf("%s scores %s %s, want %d", k, id, score, m.ms)
			}
			if seen[id] == nil {
				seen[id] = map[string]bool{}
			}
			seen[id][k] = true
		}
	}
	for id, m := range model {
		for k := range wantKeys(s.prefix, m) {
			if !seen[id][k] {
				t.Errorf("%s (%+v) missing from %s", id, m, k)
			}
		}
	}
	// Each owner's creation order holds exactly its live tasks (and
	// entries of expired ones), with a TTL.
	for _, k := range oaKeys(t, f, s) {
		if ttl, err := redisDo(t, f, "TTL", k).AsInt64(); err != nil || ttl <= 0 {
			t.Errorf("%s: TTL %d %v, want one", k, ttl, err)
		}
		members, err := redisDo(t, f, "ZRANGE", k, "0", "-1").AsStrSlice()
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range members {
			if m, live := model[id]; live && s.prefix+"oa:"+m.own != k || !live && !expired[id] {
				t.Errorf("%s holds %s (%+v, live %v)", k, id, m, live)
			}
			if seen[id] == nil { // an expired task no other index still holds
				seen[id] = map[string]bool{}
			}
			seen[id][k] = true
		}
	}
	for id, m := range model {
		if k := s.prefix + "oa:" + m.own; m.own != "" && !seen[id][k] {
			t.Errorf("%s (%+v) missing from %s", id, m, k)
		}
	}
}

// TestListStateExpiry: tasks that expire by TTL leave every filtered
// listing and total, and every index, also those no listing reads and no
// create joins (the expiry index names them all).
func TestListStateExpiry(t *testing.T) {
	r := services.StartRedis(t)
	f := newSlowFleet(t, r, "le:")
	s := newStore(t, f, TaskOptions{TTL: time.Second})
	ctx := context.Background()
	old := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for i := range 20 {
		tk := &a2a.Task{ID: fmt.Sprintf("x%02d", i), ContextID: "c", Owner: "al",
			Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired, Timestamp: old.Add(time.Duration(i) * time.Millisecond)}}
		if err := s.Create(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	if ids, total := listAll(t, s, a2a.TaskQuery{ContextID: "c", Owner: "al", State: a2a.TaskStateInputRequired, PageSize: 7}); total != 20 || len(ids) != 20 {
		t.Fatalf("before expiry: %d %v", total, ids)
	}
	time.Sleep(2100 * time.Millisecond)
	for _, q := range []a2a.TaskQuery{
		{State: a2a.TaskStateInputRequired},
		{ContextID: "c", State: a2a.TaskStateInputRequired},
		{Owner: "al", State: a2a.TaskStateInputRequired},
		{ContextID: "c", Owner: "al"},
	} {
		q.PageSize = 5
		if ids, total := listAll(t, s, q); total != 0 || len(ids) != 0 {
			t.Errorf("after expiry, %+v: %d %v", q, total, ids)
		}
	}
	// The one index no listing read and no create joined forgot them
	// too. (It used to be pruned, 16 entries at a time, only by a create
	// into it: the test created one and counted 5 left; with the expiry
	// index there is nothing left to prune.)
	k := s.prefix + "cos:6:2:al:c"
	if n, _ := redisDo(t, f, "ZCARD", k).AsInt64(); n != 0 {
		t.Errorf("%s after the tasks expired: %d entries, want 0", k, n)
	}
	for _, k := range []string{"all", "age", "exp"} {
		if n, _ := redisDo(t, f, "ZCARD", s.prefix+k).AsInt64(); n != 0 {
			t.Errorf("%s after the tasks expired: %d entries, want 0", k, n)
		}
	}
	if n, _ := redisDo(t, f, "HLEN", s.prefix+"meta").AsInt64(); n != 0 {
		t.Errorf("meta after the tasks expired: %d entries, want 0", n)
	}
}

// TestListStateUpgrade: a task written before the state indexes (in the
// context's, the owner's and all tasks' indexes only) is listed without
// filters, missing from filtered listings, and indexed fully by its next
// update, as doc.go states.
func TestListStateUpgrade(t *testing.T) {
	r := services.StartRedis(t)
	f := newSlowFleet(t, r, "lu:")
	s := newStore(t, f, TaskOptions{})
	ctx := context.Background()
	now := time.Now().Truncate(time.Millisecond)
	tk := &a2a.Task{ID: "legacy", ContextID: "c", Owner: "al", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: now}}
	data, err := encodeTask(tk)
	if err != nil {
		t.Fatal(err)
	}
	ms := millis(tk)
	for _, cmd := range [][]string{
		{"HSET", s.prefix + "t:legacy", "d", string(data), "s", "2", "c", "c", "v", "1", "u", ms, "o", "al"},
		{"ZADD", s.prefix + "c:c", ms, "legacy"},
		{"ZADD", s.prefix + "o:al", ms, "legacy"},
		{"ZADD", s.prefix + "all", ms, "legacy"},
		{"ZADD", s.prefix + "age", ms, "legacy"},
	} {
		if err := redisDo(t, f, cmd...).Error(); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []a2a.TaskQuery{{}, {ContextID: "c"}, {Owner: "al"}} {
		q.PageSize = 5
		if ids, total := listAll(t, s, q); total != 1 || len(ids) != 1 {
			t.Errorf("legacy task, %+v: %d %v", q, total, ids)
		}
	}
	for _, q := range []a2a.TaskQuery{{State: a2a.TaskStateWorking}, {ContextID: "c", Owner: "al"}} {
		q.PageSize = 5
		if ids, total := listAll(t, s, q); total != 0 || len(ids) != 0 {
			t.Errorf("legacy task before its update, %+v: %d %v", q, total, ids)
		}
	}
	if _, err := s.Update(ctx, "legacy", func(o *a2a.Task) (*a2a.Task, error) {
		n := *o
		n.Status = a2a.TaskStatus{State: a2a.TaskStateInputRequired, Timestamp: now.Add(time.Millisecond)}
		return &n, nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []a2a.TaskQuery{{State: a2a.TaskStateInputRequired}, {ContextID: "c", Owner: "al"},
		{ContextID: "c", Owner: "al", State: a2a.TaskStateInputRequired}, {Owner: "al", State: a2a.TaskStateInputRequired}} {
		q.PageSize = 5
		if ids, total := listAll(t, s, q); total != 1 || len(ids) != 1 {
			t.Errorf("legacy task after its update, %+v: %d %v", q, total, ids)
		}
	}
	checkLayout(t, f, s, map[string]mtask{"legacy": {ctx: "c", own: "al", st: a2a.TaskStateInputRequired, ms: now.UnixMilli() + 1}}, nil)
	// An old instance's change of state (the hash only): the new state's
	// listing misses the task, the old one's counts it until its page walk
	// meets it, skips it and drops the entry.
	if err := redisDo(t, f, "HSET", s.prefix+"t:legacy", "s", "2").Error(); err != nil {
		t.Fatal(err)
	}
	q := a2a.TaskQuery{ContextID: "c", Owner: "al", State: a2a.TaskStateInputRequired, PageSize: 5}
	if ids, total := listAll(t, s, q); total != 1 || len(ids) != 0 {
		t.Errorf("a task that left the state under the scripts' feet, first listing: %d %v", total, ids)
	}
	if ids, total := listAll(t, s, q); total != 0 || len(ids) != 0 {
		t.Errorf("a task that left the state under the scripts' feet, second listing: %d %v", total, ids)
	}
}

// costTasks is n tasks, half in one big context, one in ten owned by
// alice, all working but rare ones input-required; and the number of
// rare ones in each scope the cost test lists.
func costTasks(n, rare int) (tasks []*a2a.Task) {
	now := time.Now().Truncate(time.Millisecond)
	for i := range n {
		c := "big"
		if i%2 == 1 {
			c = "c" + strconv.Itoa(i%500)
		}
		o := "bob"
		if i%10 == 0 {
			o = "alice"
		}
		st := a2a.TaskStateWorking
		if i%(n/rare) == 0 || i%(n/rare) == 7 {
			st = a2a.TaskStateInputRequired
		}
		tasks = append(tasks, &a2a.Task{ID: fmt.Sprintf("task-%07d", i), ContextID: c, Owner: o,
			Status: a2a.TaskStatus{State: st, Timestamp: now.Add(-time.Duration(i%5000) * time.Millisecond)}})
	}
	return tasks
}

// costQueries are the listings the cost test and the measurement make:
// a rare state in every scope, and a context with an owner.
var costQueries = []a2a.TaskQuery{
	{State: a2a.TaskStateInputRequired, PageSize: 10},
	{State: a2a.TaskStateInputRequired, Owner: "alice", PageSize: 10},
	{State: a2a.TaskStateInputRequired, ContextID: "big", PageSize: 10},
	{State: a2a.TaskStateInputRequired, ContextID: "big", Owner: "alice", PageSize: 10},
	{ContextID: "big", Owner: "alice", PageSize: 10},
}

// wantTotal is the brute-force total of q over tasks.
func wantTotal(tasks []*a2a.Task, q a2a.TaskQuery) (n int) {
	for _, tk := range tasks {
		if (q.ContextID == "" || tk.ContextID == q.ContextID) && (q.Owner == "" || tk.Owner == q.Owner) &&
			(q.State == 0 || tk.Status.State == q.State) {
			n++
		}
	}
	return n
}

// TestListStateCost: a status-filtered listing of 50,000 tasks (and one
// of a context with an owner) runs a few dozen commands in Redis, not one
// per task in scope (the old script's HMGET per task: some 0.4 s of Redis
// at this size, past the fleet's call timeout). Counted by Redis itself
// (INFO commandstats counts the commands a script runs).
func TestListStateCost(t *testing.T) {
	if testing.Short() {
		t.Skip("50,000 tasks")
	}
	r := services.StartRedis(t)
	f := newSlowFleet(t, r, "lc:")
	s := newStore(t, f, TaskOptions{MaxOwnerTasks: DefaultMaxTasks}) // bob holds 45,000
	tasks := costTasks(50000, 50)
	bulkCreate(t, s, tasks)
	ctx := context.Background()
	for _, q := range costQueries {
		if err := redisDo(t, f, "CONFIG", "RESETSTAT").Error(); err != nil {
			t.Fatal(err)
		}
		p, err := s.List(ctx, q)
		if err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		calls, usec := cmdStats(t, f)
		n := inScript(calls)
		t.Logf("%+v: total %d, %d tasks, %d commands in the script, %d µs", q, p.TotalSize, len(p.Tasks), n, usec["evalsha"]+usec["eval"])
		if want := wantTotal(tasks, q); p.TotalSize != want || len(p.Tasks) != min(want, q.PageSize) {
			t.Errorf("%+v: total %d, %d tasks, want %d", q, p.TotalSize, len(p.Tasks), want)
		}
		// A page of 10: the prune, the count, a few range reads and a
		// read per task of the page; the old script ran 50,000.
		if n > 60 {
			t.Errorf("%+v: %d commands in Redis for a page of %d: the listing walks its scope", q, n, q.PageSize)
		}
	}
}

// TestListStateMeasure prints the figures of doc.go's Security section:
// the script's time (INFO commandstats µs) for status-filtered listings
// at 10,000, 50,000 and 100,000 tasks, the cost of a create and of an
// update, and memory per task. Run with FLEET_MEASURE=1.
func TestListStateMeasure(t *testing.T) {
	if os.Getenv("FLEET_MEASURE") == "" {
		t.Skip("FLEET_MEASURE not set")
	}
	ctx := context.Background()
	for _, n := range []int{10000, 50000, 100000} {
		r := services.StartRedis(t)
		f := newSlowFleet(t, r, "lx:")
		s := newStore(t, f, TaskOptions{MaxTasks: 200000, MaxOwnerTasks: 200000})
		m0 := mem2(t, f)
		tasks := costTasks(n, 50)
		bulkCreate(t, s, tasks)
		keys, _ := redisDo(t, f, "DBSIZE").AsInt64()
		t.Logf("n=%d: used_memory %d B/task, %d keys", n, (mem2(t, f)-m0)/int64(n), keys)
		for _, q := range costQueries {
			best := int64(-1)
			for range 3 {
				redisDo(t, f, "CONFIG", "RESETSTAT")
				if _, err := s.List(ctx, q); err != nil {
					t.Fatal(err)
				}
				_, usec := cmdStats(t, f)
				if u := usec["evalsha"] + usec["eval"]; best < 0 || u < best {
					best = u
				}
			}
			t.Logf("n=%d list ctx=%q owner=%q state=%d: %d µs in Redis (best of 3)", n, q.ContextID, q.Owner, q.State, best)
		}
		if n != 10000 {
			continue
		}
		{
			// Memory, the worst shape for keys: a context per task
			// (each its own context, state and (context, owner) keys).
			r := services.StartRedis(t)
			f := newSlowFleet(t, r, "ly:")
			s := newStore(t, f, TaskOptions{MaxTasks: 200000, MaxOwnerTasks: 200000})
			m0 := mem2(t, f)
			const n = 50000
			tasks := costTasks(n, 50)
			for i, tk := range tasks {
				tk.ContextID = fmt.Sprintf("ctx-%07d", i)
			}
			bulkCreate(t, s, tasks)
			keys, _ := redisDo(t, f, "DBSIZE").AsInt64()
			t.Logf("a context per task, n=%d: used_memory %d B/task, %d keys", n, (mem2(t, f)-m0)/n, keys)
		}
		// Creates and updates, one call at a time, at 10,000 tasks (an
		// Update's read, one HMGET, is left out of its commands).
		const k = 3000
		redisDo(t, f, "CONFIG", "RESETSTAT")
		now := time.Now()
		for i := range k {
			tk := &a2a.Task{ID: fmt.Sprintf("m%05d", i), ContextID: "c" + strconv.Itoa(i%100), Owner: "alice",
				Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: now}}
			if err := s.Create(ctx, tk); err != nil {
				t.Fatal(err)
			}
		}
		calls, usec := cmdStats(t, f)
		t.Logf("create: %.1f µs per EVALSHA, %.1f commands (%d calls)", float64(usec["evalsha"])/float64(calls["evalsha"]),
			float64(inScript(calls))/float64(calls["evalsha"]), calls["evalsha"])
		for _, change := range []bool{true, false} {
			redisDo(t, f, "CONFIG", "RESETSTAT")
			for i := range k {
				if _, err := s.Update(ctx, fmt.Sprintf("m%05d", i), func(o *a2a.Task) (*a2a.Task, error) {
					n := *o
					if change {
						n.Status.State = a2a.TaskStateWorking
					}
					n.Status.Timestamp = now.Add(time.Millisecond)
					return &n, nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			calls, usec = cmdStats(t, f)
			t.Logf("update (state change %v): %.1f µs per EVALSHA, %.1f commands (%d calls)", change,
				float64(usec["evalsha"])/float64(calls["evalsha"]), float64(inScript(calls)-k)/float64(calls["evalsha"]), calls["evalsha"])
		}
	}
}

// mem2 is INFO memory's used_memory.
func mem2(t testing.TB, f *Fleet) int64 {
	info, _ := redisDo(t, f, "INFO", "memory").ToString()
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "used_memory:"); ok {
			m, _ := strconv.ParseInt(v, 10, 64)
			return m
		}
	}
	return 0
}
