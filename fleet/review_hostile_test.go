package fleet

// Hostile review of the fleet (tasks, listings, limiter, failure modes).
// Each test asserts the behaviour the package documents or an embedder
// needs; a test that fails shows a bug.

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/a2a"
	"github.com/rpcedge/rpcedge/internal/services"
)

// TestReviewHostileListWalksExpiredTasks: one owner creates many tasks,
// lets them expire (the TTL), and then asks ListTasks for a page of its
// tasks. The index of that owner still holds an entry per expired task
// (pruned only past TTL + 5 s, at most 1,000 a listing); the listing's
// script walks every one of them in one call, with ZREVRANGEBYSCORE
// LIMIT offset paging (quadratic in the entries skipped), holding Redis
// for every instance. "Every script's work is bounded" (doc.go).
// Measured here: 30,000 expired tasks, 120,000 commands and 0.42 s of
// Redis for one page (the call timed out); 60,000, 3.3 s (every
// instance's calls timed out, the fleet went down). Nothing but the TTL
// is needed: any owner can do it with its own tasks.
func TestReviewHostileListWalksExpiredTasks(t *testing.T) {
	r := services.StartRedis(t)
	slow := newSlowFleet(t, r, "hw:")
	s := newStore(t, slow, TaskOptions{TTL: time.Second})
	const n = 30000
	now := time.Now().UTC()
	tasks := make([]*a2a.Task, n)
	for i := range tasks {
		tasks[i] = &a2a.Task{ID: fmt.Sprintf("%08d-0000-4000-8000-000000000000", i), ContextID: "c", Owner: "mallory",
			Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: now}}
	}
	start := time.Now()
	bulkCreate(t, s, tasks)
	t.Logf("created %d in %v", n, time.Since(start))
	// wait for the hashes to expire
	ctx := context.Background()
	for deadline := time.Now().Add(8 * time.Second); ; {
		m, err := slow.client.Do(ctx, slow.client.B().Exists().Key(s.prefix+"t:"+tasks[n-1].ID).Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		if m == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d keys left", m)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// An instance with the default call timeout serves the listing.
	f := newFleet(t, r, "b", "hw:")
	fs := newStore(t, f, TaskOptions{TTL: time.Second})
	if err := redisDo(t, slow, "CONFIG", "RESETSTAT").Error(); err != nil {
		t.Fatal(err)
	}
	slowlogAll(t, slow)
	start = time.Now()
	p, err := fs.List(ctx, a2a.TaskQuery{Owner: "mallory", PageSize: 10})
	el := time.Since(start)
	calls, usec := cmdStats(t, slow)
	// Both stores' reapers run beside the listing (a second apart, 256
	// tasks a call): INFO counts their work too, so the listing's own
	// time is read from the slow log, by its owner argument.
	own := scriptTimes(t, slow, "mallory")
	t.Logf("list: %d tasks, total %d, err %v, %v; %d commands in Redis, %d µs of script (reapers included); the listing's script: %v µs",
		len(p.Tasks), p.TotalSize, err, el, inScript(calls), usec["evalsha"]+usec["eval"], own)
	if err != nil || !f.Up() {
		t.Errorf("a page of an owner's expired tasks: %v (fleet up: %v)", err, f.Up())
	}
	// The bound itself, whatever the machine's speed: past 256 expired
	// entries the page ends, with a token to go on from.
	if p.TotalSize > listSkip+reapPerList && p.NextPageToken == "" {
		t.Errorf("a page passed over all %d expired entries: no next page token", p.TotalSize)
	}
	// The listing's time: 5 to 7 ms alone here; 145 ms without the bound
	// on entries passed over (the token check catches that on any
	// machine), 420 ms before the walk went by rank. 250 ms leaves room
	// for a redis-server sharing two cores with four test packages (CI:
	// the old check, INFO's sum over the reapers too, read 54 ms there).
	// (An EVALSHA answered NOSCRIPT, then the EVAL, on the first call.)
	if len(own) == 0 || len(own) > 2 {
		t.Fatalf("the slow log holds %d scripts of the listing, want 1 or 2", len(own))
	}
	var us int64
	for _, d := range own {
		us += d
	}
	if us > 250000 {
		t.Errorf("one ListTasks held Redis for %d µs", us)
	}
}

// slowlogAll makes f's Redis log every command in its slow log (up to
// 10,000) and empties the log.
func slowlogAll(t testing.TB, f *Fleet) {
	t.Helper()
	for _, args := range [][]string{
		{"CONFIG", "SET", "slowlog-log-slower-than", "0"},
		{"CONFIG", "SET", "slowlog-max-len", "10000"},
		{"SLOWLOG", "RESET"},
	} {
		if err := redisDo(t, f, args...).Error(); err != nil {
			t.Fatal(err)
		}
	}
}

// scriptTimes reads f's slow log (slowlogAll first) and returns the
// duration in µs of each EVAL or EVALSHA one of whose arguments is arg.
func scriptTimes(t testing.TB, f *Fleet, arg string) (us []int64) {
	t.Helper()
	entries, err := redisDo(t, f, "SLOWLOG", "GET", "-1").ToArray()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		fields, err := e.ToArray()
		if err != nil || len(fields) < 4 {
			t.Fatalf("slow log entry: %v %v", fields, err)
		}
		d, err := fields[2].AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		args, err := fields[3].AsStrSlice()
		if err != nil || len(args) == 0 {
			t.Fatalf("slow log entry's arguments: %v %v", args, err)
		}
		if cmd := strings.ToUpper(args[0]); cmd != "EVALSHA" && cmd != "EVAL" {
			continue
		}
		for _, a := range args[1:] {
			if a == arg {
				us = append(us, d)
				break
			}
		}
	}
	return us
}

// TestReviewHostileStateIndexesNeverPruned: tasks that reach a state by
// an Update (canceled here: CancelTask, any owner may cancel its own) sit
// in the indexes of that state (s:<st>, os:<st>:<owner>, cs:<st>:<ctx>,
// cos:...). A create prunes only the indexes it joins, and a new task is
// not created canceled, so nothing ever forgets the entries of expired
// canceled tasks there: not the creates, not the MaxTasks eviction (the
// hash is gone, so drop cannot name the indexes), and with authorization
// on no listing reads s:<st> or cs:<st>:<ctx> (every listing names its
// owner). Those keys are touched by every cancel, so they never expire:
// they grow by one entry per canceled task for as long as the fleet runs.
func TestReviewHostileStateIndexesNeverPruned(t *testing.T) {
	t.Parallel()
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "sp:")
	s := newStore(t, f, TaskOptions{TTL: time.Second})
	ctx := context.Background()
	const n = 100
	round := func(tag string) {
		for i := range n {
			id := fmt.Sprintf("%s%03d", tag, i)
			tk := &a2a.Task{ID: id, ContextID: "c1", Owner: "alice", Seq: 1,
				Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: time.Now().UTC()}}
			if err := s.Create(ctx, tk); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Update(ctx, id, func(old *a2a.Task) (*a2a.Task, error) {
				nt := *old
				nt.Seq++
				nt.Status = a2a.TaskStatus{State: a2a.TaskStateCanceled, Timestamp: time.Now().UTC()}
				return &nt, nil
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	round("old")
	// The first round expires (TTL 1 s) and passes the prune's margin
	// (TTL + 5 s after its status time).
	time.Sleep(6500 * time.Millisecond)
	if n, _ := redisDo(t, f, "EXISTS", "sp:{a2a}:t:old099").AsInt64(); n != 0 {
		t.Fatal("the first round did not expire")
	}
	round("new")
	// Normal use meanwhile: the owner lists its tasks.
	if _, err := s.List(ctx, a2a.TaskQuery{Owner: "alice", PageSize: 10}); err != nil {
		t.Fatal(err)
	}
	st := strconv.Itoa(int(a2a.TaskStateCanceled))
	for _, k := range []string{"o:alice", "c:c1", "s:" + st, "os:" + st + ":alice", "cs:" + st + ":c1", "cos:" + st + ":5:alice:c1"} {
		m, err := redisDo(t, f, "ZCARD", "sp:{a2a}:"+k).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		if m > n+n/2 {
			t.Errorf("%s holds %d entries: %d live tasks, the %d that expired over 6 s ago are never forgotten", k, m, n, n)
		}
	}
}

// TestReviewHostileLimiterFlapDoubleBurst: a client spends the fleet-wide
// burst through Redis; Redis then goes away (killed here; a partition or a
// call timeout does the same), and each instance's fallback share starts
// full: the client gets a second burst B at once. Over that window the
// fleet admits about 2B + R·W, past the stated B + R·W + N·L (the same
// happens the other way: while the fleet serves from the shares, the
// GCRA in Redis refills, and a whole burst is there again when Redis
// answers). A hostile network flapping Redis gets a fresh burst per flap.
func TestReviewHostileLimiterFlapDoubleBurst(t *testing.T) {
	r := services.StartRedis(t)
	mk := func(name string) *Fleet {
		f, err := New(Options{URL: r.URL(), Instance: name, Prefix: "fb:", Logger: quiet(),
			ProbeInterval: 50 * time.Millisecond, Heartbeat: 100 * time.Millisecond, Timeout: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(f.Close)
		waitUp(t, f)
		return f
	}
	fa, fb := mk("a"), mk("b")
	for deadline := time.Now().Add(3 * time.Second); (fa.Size() != 2 || fb.Size() != 2) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if fa.Size() != 2 || fb.Size() != 2 {
		t.Fatalf("sizes %d %d, want 2", fa.Size(), fb.Size())
	}
	o := LimiterOptions{Rate: 5, Burst: 20}
	la, lb := newLimiter(t, fa, o), newLimiter(t, fb, o)
	key := netip.MustParseAddr("198.51.100.9")
	start := time.Now()
	admitted := 0
	for range 60 { // the burst, through Redis
		for _, l := range []*Limiter{la, lb} {
			if l.Take(key) == 0 {
				admitted++
			}
		}
	}
	viaRedis := admitted
	r.Kill()
	// The heartbeats find Redis gone (a Take refused locally makes no
	// call, so it would not).
	for deadline := time.Now().Add(2 * time.Second); (fa.Up() || fb.Up()) && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if fa.Up() || fb.Up() {
		t.Fatal("Redis killed, the fleet still up after 2 s")
	}
	for range 60 {
		for _, l := range []*Limiter{la, lb} {
			if l.Take(key) == 0 {
				admitted++
			}
		}
	}
	w := time.Since(start)
	bound := la.Bound(2, w)
	t.Logf("%d admitted through Redis, %d after it went away, in %v; bound %.1f", viaRedis, admitted-viaRedis, w, bound)
	if float64(admitted) > bound {
		t.Errorf("%d requests of one client admitted in %v, past the bound B + R·W + N·L = %.1f", admitted, w, bound)
	}
}

// TestReviewHostileSharedInstanceName: two processes with the same
// Instance (the default: the host name, so two rpcedge processes on one
// host; or a copied -instance): the heartbeats' sorted set holds one
// member for both, so each
// counts a fleet of 1, and with Redis down each serves the whole Rate and
// Burst on its own (2× the limit). Close of one also removes the other's
// membership. The Broker already tells such processes apart (a random
// origin); the membership does not.
func TestReviewHostileSharedInstanceName(t *testing.T) {
	r := services.StartRedis(t)
	a := newFleet(t, r, "edge", "sn:")
	b := newFleet(t, r, "edge", "sn:")
	deadline := time.Now().Add(2 * time.Second)
	for (a.Size() != 2 || b.Size() != 2) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if a.Size() != 2 || b.Size() != 2 {
		t.Errorf("two processes named %q: sizes %d and %d, want 2 (the fallback share is Rate/Size)", "edge", a.Size(), b.Size())
	}
}

// TestReviewHostileListAfterInsideMillisecond: statusTimestampAfter
// selects tasks whose status time is at or after it (a2a.TaskQuery.After,
// as the MemoryStore does). tasks.go rounds an After inside a millisecond
// up to the next one, though its comment says "that millisecond matches":
// a task 0.2 ms after After, in the same millisecond, is left out.
func TestReviewHostileListAfterInsideMillisecond(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "am:")
	s := newStore(t, f, TaskOptions{})
	mem := a2a.NewMemoryStore(0, 0)
	ctx := context.Background()
	base := time.Now().UTC().Truncate(time.Millisecond)
	tk := &a2a.Task{ID: "t1", ContextID: "c", Seq: 1, Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: base.Add(700 * time.Microsecond)}}
	for _, st := range []a2a.TaskStore{s, mem} {
		if err := st.Create(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	q := a2a.TaskQuery{After: base.Add(500 * time.Microsecond), PageSize: 10}
	pm, err := mem.List(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := s.List(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(pf.Tasks) != len(pm.Tasks) || pf.TotalSize != pm.TotalSize {
		t.Errorf("a task at %v, listed after %v: fleet lists %d (total %d), the MemoryStore %d (total %d)",
			tk.Status.Timestamp.Format(time.RFC3339Nano), q.After.Format(time.RFC3339Nano), len(pf.Tasks), pf.TotalSize, len(pm.Tasks), pm.TotalSize)
	}
}

// TestReviewHostileUpdateChangesOwner: Update refuses a change of the
// task's id or context, but takes a change of Owner into the task's JSON
// and leaves the hash's owner (o) and the owner indexes as they were. The
// former owner then lists, in full, a task that Get says belongs to
// someone else (its history, artifacts, later changes), and the new owner
// does not find it in its listing. An embedder that hands a task over
// (a2a.TaskStore lets f return any task with the same ID and ContextID)
// leaks it to the previous owner.
func TestReviewHostileUpdateChangesOwner(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "uo:")
	s := newStore(t, f, TaskOptions{})
	ctx := context.Background()
	tk := &a2a.Task{ID: "t1", ContextID: "c", Owner: "alice", Seq: 1, Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: time.Now().UTC()}}
	if err := s.Create(ctx, tk); err != nil {
		t.Fatal(err)
	}
	_, err := s.Update(ctx, "t1", func(old *a2a.Task) (*a2a.Task, error) {
		nt := *old
		nt.Seq++
		nt.Owner = "bob"
		nt.Metadata = []byte(`{"secret":"bob's"}`)
		return &nt, nil
	})
	if err != nil {
		return // refusing the change is a fine answer
	}
	got, err := s.Get(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	pa, err := s.List(ctx, a2a.TaskQuery{Owner: "alice", PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	pb, err := s.List(ctx, a2a.TaskQuery{Owner: "bob", PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, lt := range pa.Tasks {
		if lt.Owner != "alice" {
			t.Errorf("alice's listing holds task %s of owner %q (metadata %s)", lt.ID, lt.Owner, lt.Metadata)
		}
	}
	if got.Owner == "bob" && len(pb.Tasks) != 1 {
		t.Errorf("Get says the task is bob's; bob's listing has %d tasks", len(pb.Tasks))
	}
}

// TestReviewHostileMaxTasksLoweredEvictsAtOnce: "A create evicts at most
// the excess" (doc.go), and the excess has no bound: an instance started
// with a lower MaxTasks than the fleet ran with (a config change rolled
// out, two instances configured apart) evicts everything above its bound
// in the script of its first create, holding Redis for every instance.
func TestReviewHostileMaxTasksLoweredEvictsAtOnce(t *testing.T) {
	r := services.StartRedis(t)
	slow := newSlowFleet(t, r, "ml:")
	big := newStore(t, slow, TaskOptions{})
	now := time.Now().UTC()
	tasks := make([]*a2a.Task, 20000)
	for i := range tasks {
		tasks[i] = &a2a.Task{ID: fmt.Sprintf("t%06d", i), ContextID: "c", Owner: "o", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: now}}
	}
	bulkCreate(t, big, tasks)
	f := newFleet(t, r, "b", "ml:")
	small := newStore(t, f, TaskOptions{MaxTasks: 100})
	if err := redisDo(t, slow, "CONFIG", "RESETSTAT").Error(); err != nil {
		t.Fatal(err)
	}
	err := small.Create(context.Background(), &a2a.Task{ID: "new", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: now}})
	calls, usec := cmdStats(t, slow)
	n, us := inScript(calls), usec["evalsha"]+usec["eval"]
	t.Logf("create: %v; %d commands in Redis, %d µs", err, n, us)
	if n > 5000 || err != nil || !f.Up() {
		t.Errorf("one create ran %d commands in Redis (%d µs; %v; fleet up %v)", n, us, err, f.Up())
	}
}

// TestReviewHostilePruneBlockedByLiveTasks: prune reads the 16 (a
// create) or 1,000 (a listing) lowest entries at or below TTL + 5 s ago
// and forgets those whose hash is gone. A task whose status time is that
// old and whose hash lives on is read again by every prune and blocks it:
// one whose artifacts keep coming (a2a.Server.UpdateArtifact renews the
// TTL and leaves the status, so the score, as they were). Sixteen such
// tasks of an owner, and its creates never forget an expired task of its
// index again: the index grows by every task it creates.
func TestReviewHostilePruneBlockedByLiveTasks(t *testing.T) {
	t.Parallel()
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "pk:")
	s := newStore(t, f, TaskOptions{TTL: time.Second})
	ctx := context.Background()
	create := func(id string) {
		tk := &a2a.Task{ID: id, ContextID: "c-" + id, Owner: "alice", Seq: 1,
			Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: time.Now().UTC()}}
		if err := s.Create(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	const blockers, n = 16, 100
	for i := range blockers {
		create(fmt.Sprintf("long%02d", i))
	}
	// An agent streams artifacts of the long tasks (UpdateArtifact: the
	// status stays, the TTL is renewed).
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for k := 0; ; k++ {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			for i := range blockers {
				s.Update(ctx, fmt.Sprintf("long%02d", i), func(old *a2a.Task) (*a2a.Task, error) {
					nt := *old
					nt.Seq++
					nt.Artifacts = []a2a.Artifact{{ArtifactID: "a", Parts: a2a.PartsOf(a2a.Part{Kind: a2a.PartText, Text: strconv.Itoa(k)})}}
					return &nt, nil
				})
			}
		}
	}()
	defer func() { close(stop); <-done }()
	for i := range n {
		create(fmt.Sprintf("old%03d", i))
	}
	time.Sleep(6500 * time.Millisecond) // the old ones expired, past the prune's margin
	for i := range n {
		create(fmt.Sprintf("new%03d", i))
	}
	if ex, _ := redisDo(t, f, "EXISTS", "pk:{a2a}:t:long00").AsInt64(); ex != 1 {
		t.Fatal("a long task expired: the keep-alive did not keep up")
	}
	m, err := redisDo(t, f, "ZCARD", "pk:{a2a}:o:alice").AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	if m > blockers+n+n/2 {
		t.Errorf("o:alice holds %d entries: %d live tasks, and the %d that expired over 6 s ago are not forgotten", m, blockers+n, n)
	}
}

// TestReviewHostileTotalCountsLongExpired: a listing prunes at most 1,000
// expired entries of its index and then counts the index (ZCOUNT): past
// 1,000, tasks that expired long ago are in the total. doc.go promises a
// total off only by tasks that expired less than 5 s ago.
func TestReviewHostileTotalCountsLongExpired(t *testing.T) {
	t.Parallel()
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "tl:")
	s := newStore(t, f, TaskOptions{TTL: time.Second})
	now := time.Now().UTC()
	const n = 1500
	tasks := make([]*a2a.Task, n)
	for i := range tasks {
		tasks[i] = &a2a.Task{ID: fmt.Sprintf("t%05d", i), ContextID: "c", Owner: "alice",
			Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: now}}
	}
	bulkCreate(t, s, tasks)
	time.Sleep(6500 * time.Millisecond) // expired, and past the prune's margin
	if ex, _ := redisDo(t, f, "EXISTS", "tl:{a2a}:t:t01499").AsInt64(); ex != 0 {
		t.Fatal("the tasks did not expire")
	}
	p, err := s.List(context.Background(), a2a.TaskQuery{Owner: "alice", PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	if p.TotalSize != 0 || len(p.Tasks) != 0 {
		t.Errorf("alice has no task (all %d expired over 5 s ago): listing total %d, %d tasks", n, p.TotalSize, len(p.Tasks))
	}
}

// TestReviewHostileLongContextAmplified: a client chooses the contextId
// of a new task (message.contextId), up to the request's size. The
// context is in the task's JSON (bounded by MaxTaskBytes), and again in
// the hash's c field and in the name of four index keys (c:, cs:, co:,
// cos:): a task near the bound costs Redis several times MaxTaskBytes.
func TestReviewHostileLongContextAmplified(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "lc:")
	const maxB = 256 << 10
	s := newStore(t, f, TaskOptions{MaxTaskBytes: maxB})
	ctx := context.Background()
	mem := func() int64 {
		info, err := redisDo(t, f, "INFO", "memory").ToString()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
		}
		t.Fatal("no used_memory")
		return 0
	}
	const k = 20
	before := mem()
	var enc int
	for i := range k {
		c := strings.Repeat(string(rune('a'+i)), maxB-300)
		tk := &a2a.Task{ID: fmt.Sprintf("t%02d", i), ContextID: c, Owner: "mallory", Seq: 1,
			Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: time.Now().UTC()}}
		data, _ := encodeTask(tk)
		enc += len(data)
		if err := s.Create(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	per := (mem() - before) / k
	t.Logf("%d tasks of %d encoded bytes each: %d bytes of Redis memory each", k, enc/k, per)
	if per > 2*int64(enc/k) {
		t.Errorf("a task of %d encoded bytes (MaxTaskBytes %d) costs %d bytes of Redis memory", enc/k, maxB, per)
	}
}

// TestReviewHostileTwoLimitersShareKeys: two Limiters of one Fleet (two
// endpoints with their own limits: LimiterOptions per Limiter, metrics
// GetOrCreate'd for several) keep a client's GCRA under the same Redis
// key (prefix + "rl:" + address), read with each one's own period and
// burst: a client's traffic on one endpoint spends the other's limit.
func TestReviewHostileTwoLimitersShareKeys(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "tk:")
	hot := newLimiter(t, f, LimiterOptions{Rate: 1000, Burst: 1000})
	slow := newLimiter(t, f, LimiterOptions{Rate: 1, Burst: 1})
	key := netip.MustParseAddr("203.0.113.5")
	if slow.Take(key) != 0 {
		t.Fatal("the client's first request on the Rate 1 limiter refused")
	}
	ok := 0
	for range 100 {
		if hot.Take(key) == 0 {
			ok++
		}
	}
	if ok != 100 {
		t.Errorf("after one request on a Rate 1 limiter, the client's first 100 requests on a Rate 1000, Burst 1000 limiter: %d admitted", ok)
	}
}
