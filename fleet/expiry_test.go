package fleet

// NOTE: the tests of the expiry index (exp, meta) and of the listing's
// bounded walk, added with the fixes of the hostile review of
// 2026-12-06 (review_hostile_test.go holds the findings themselves).

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/a2a"
	"github.com/rpcedge/rpcedge/internal/services"
)

// TestListSkipsStaleInSteps: a listing meets 1,000 entries of tasks
// whose hash is gone (deleted here, their time in the expiry index still
// ahead, so that no reap takes them first) among 300 live ones, many at
// one millisecond. Each page passes over at most listSkip of them, so
// some pages are short or empty, with a next page token; paging lists
// every live task once, in order, and leaves the stale entries forgotten
// in every index.
func TestListSkipsStaleInSteps(t *testing.T) {
	r := services.StartRedis(t)
	f := newSlowFleet(t, r, "sk:")
	s := newStore(t, f, TaskOptions{})
	at := time.Now().UTC().Truncate(time.Millisecond)
	var tasks []*a2a.Task
	var live []string
	for i := range 1300 {
		id := fmt.Sprintf("t%05d", i)
		if i%13 >= 3 {
			id = "dead-" + id
		} else {
			live = append(live, id)
		}
		// three milliseconds: most entries tie with many others
		tasks = append(tasks, &a2a.Task{ID: id, ContextID: "c", Owner: "al",
			Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: at.Add(time.Duration(i%3) * time.Millisecond)}})
	}
	bulkCreate(t, s, tasks)
	for _, tk := range tasks {
		if strings.HasPrefix(tk.ID, "dead-") {
			if err := redisDo(t, f, "DEL", s.prefix+"t:"+tk.ID).Error(); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := slices.Clone(live)
	slices.SortFunc(want, func(a, b string) int {
		ma, mb := tasksMs(tasks, a), tasksMs(tasks, b)
		if ma != mb {
			return int(mb - ma)
		}
		return strings.Compare(b, a)
	})
	ctx := context.Background()
	q := a2a.TaskQuery{Owner: "al", PageSize: 7}
	var got []string
	short := 0
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("the listing never ended")
		}
		p, err := s.List(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if p.NextPageToken != "" && len(p.Tasks) < q.PageSize {
			short++
		}
		for _, tk := range p.Tasks {
			got = append(got, tk.ID)
		}
		if q.PageToken = p.NextPageToken; q.PageToken == "" {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("listed %d tasks, want the %d live ones in order:\n got %v\nwant %v", len(got), len(want), got, want)
	}
	if short == 0 {
		t.Error("no page ended early: the walk passed over 1,000 stale entries in one call")
	}
	for _, k := range []string{"all", "o:al", "c:c", "co:2:al:c", "os:2:al", "exp", "age"} {
		if n, _ := redisDo(t, f, "ZCARD", s.prefix+k).AsInt64(); n != int64(len(live)) {
			t.Errorf("%s holds %d entries after the listing, want the %d live tasks", k, n, len(live))
		}
	}
	if n, _ := redisDo(t, f, "HLEN", s.prefix+"meta").AsInt64(); n != int64(len(live)) {
		t.Errorf("meta holds %d entries, want %d", n, len(live))
	}
	if p, err := s.List(ctx, a2a.TaskQuery{Owner: "al", PageSize: 1}); err != nil || p.TotalSize != len(live) {
		t.Errorf("total after the walk: %d %v, want %d", p.TotalSize, err, len(live))
	}
}

func tasksMs(tasks []*a2a.Task, id string) int64 {
	for _, tk := range tasks {
		if tk.ID == id {
			return tk.Status.Timestamp.UnixMilli()
		}
	}
	return 0
}

// TestListCursorGone: the task a page token points at leaves the index
// between two pages (its status changes: it moves to the front; or its
// entry is gone), among tasks of one millisecond: the next page goes on
// right after the token's place, each other task listed once.
func TestListCursorGone(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "cg:")
	s := newStore(t, f, TaskOptions{})
	ctx := context.Background()
	at := time.Now().UTC().Truncate(time.Millisecond)
	for i := range 9 {
		tk := &a2a.Task{ID: fmt.Sprintf("t%d", i), ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: at}}
		if err := s.Create(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	q := a2a.TaskQuery{ContextID: "c", PageSize: 3}
	p, err := s.List(ctx, q)
	if err != nil || len(p.Tasks) != 3 || p.Tasks[2].ID != "t6" {
		t.Fatalf("first page: %+v %v", p, err)
	}
	// t6, the cursor, changes: a newer status time.
	if _, err := s.Update(ctx, "t6", func(o *a2a.Task) (*a2a.Task, error) {
		n := *o
		n.Status.Timestamp = at.Add(time.Second)
		return &n, nil
	}); err != nil {
		t.Fatal(err)
	}
	q.PageToken = p.NextPageToken
	p, err = s.List(ctx, q)
	if err != nil || len(p.Tasks) != 3 || p.Tasks[0].ID != "t5" || p.Tasks[2].ID != "t3" {
		t.Fatalf("after the cursor moved: %v %v", ids(p.Tasks), err)
	}
	// t3, the cursor now, leaves the index.
	if err := redisDo(t, f, "ZREM", s.prefix+"c:c", "t3").Error(); err != nil {
		t.Fatal(err)
	}
	q.PageToken = p.NextPageToken
	p, err = s.List(ctx, q)
	if err != nil || !slices.Equal(ids(p.Tasks), []string{"t2", "t1", "t0"}) {
		t.Fatalf("after the cursor left: %v %v", ids(p.Tasks), err)
	}
	// The cursor's place was found with the cursor put in the index for
	// that moment: it is not left there.
	if err := redisDo(t, f, "ZSCORE", s.prefix+"c:c", "t3").Error(); err == nil {
		t.Error("the gone cursor's entry is in the index")
	}
	if sc, _ := redisDo(t, f, "ZSCORE", s.prefix+"c:c", "t6").AsInt64(); sc != at.Add(time.Second).UnixMilli() {
		t.Errorf("the moved cursor's entry scores %d, want its new status time", sc)
	}
}

func ids(ts []*a2a.Task) (out []string) {
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

// TestListForgedTokenBeforeAfter: a page token (forged: ours never do
// this) whose millisecond is before the query's After lists nothing past
// After (the first page of an After listing read the token's whole
// millisecond, After or not).
func TestListForgedTokenBeforeAfter(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "ft2:")
	s := newStore(t, f, TaskOptions{})
	ctx := context.Background()
	old := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
	for i := range 3 {
		if err := s.Create(ctx, &a2a.Task{ID: fmt.Sprintf("old%d", i), ContextID: "c", Owner: "al",
			Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: old}}); err != nil {
			t.Fatal(err)
		}
	}
	tok := string(a2a.AppendPageToken(nil, a2a.PageCursor{Millis: old.UnixMilli(), ID: "zzz"}))
	p, err := s.List(ctx, a2a.TaskQuery{Owner: "al", After: old.Add(time.Minute), PageSize: 10, PageToken: tok})
	if err != nil || len(p.Tasks) != 0 {
		t.Errorf("a token before After listed %v (%v)", ids(p.Tasks), err)
	}
}

// TestLongContextAndOwner: a context id and an owner past maxKeyPart
// bytes are named in the keys by their digest, and list, change state
// and expire as any other; one of maxKeyPart bytes is named as is.
func TestLongContextAndOwner(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "lk:")
	s := newStore(t, f, TaskOptions{})
	ctx := context.Background()
	long, own := strings.Repeat("c", 5000), strings.Repeat("o", 300)
	edge := strings.Repeat("e", maxKeyPart)
	at := time.Now().UTC()
	for _, tk := range []*a2a.Task{
		{ID: "t1", ContextID: long, Owner: own, Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: at}},
		{ID: "t2", ContextID: edge, Owner: own, Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: at}},
		{ID: "t3", ContextID: long[:4999] + "d", Owner: own, Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: at}},
	} {
		if err := s.Create(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Update(ctx, "t1", func(o *a2a.Task) (*a2a.Task, error) {
		n := *o
		n.Status.State = a2a.TaskStateInputRequired
		return &n, nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q    a2a.TaskQuery
		want []string
	}{
		{a2a.TaskQuery{ContextID: long}, []string{"t1"}},
		{a2a.TaskQuery{ContextID: long, Owner: own}, []string{"t1"}},
		{a2a.TaskQuery{ContextID: long, Owner: own, State: a2a.TaskStateInputRequired}, []string{"t1"}},
		{a2a.TaskQuery{ContextID: long, State: a2a.TaskStateWorking}, nil},
		{a2a.TaskQuery{Owner: own}, []string{"t3", "t2", "t1"}},
		{a2a.TaskQuery{Owner: own, State: a2a.TaskStateWorking}, []string{"t3", "t2"}},
		{a2a.TaskQuery{ContextID: edge, Owner: own}, []string{"t2"}},
		{a2a.TaskQuery{ContextID: long[:4999] + "d"}, []string{"t3"}},
	} {
		c.q.PageSize = 10
		p, err := s.List(ctx, c.q)
		if err != nil || !slices.Equal(ids(p.Tasks), c.want) || p.TotalSize != len(c.want) {
			t.Errorf("List(ctx %d bytes, owner %d bytes, state %d): %v total %d (%v), want %v", len(c.q.ContextID), len(c.q.Owner), c.q.State, ids(p.Tasks), p.TotalSize, err, c.want)
		}
	}
	keys, _ := redisDo(t, f, "KEYS", s.prefix+"*").AsStrSlice()
	for _, k := range keys {
		if len(k) > 200 {
			t.Errorf("a key of %d bytes: %.80s...", len(k), k)
		}
	}
	if ok, _ := redisDo(t, f, "EXISTS", s.prefix+"c:"+edge).AsBool(); !ok {
		t.Errorf("a context of %d bytes is not named as is", maxKeyPart)
	}
}

// TestUpgradeExpiry: tasks written by the release before the expiry
// index (hash and indexes, nothing in exp or meta) are added to it by the
// reaper's walk over age while they live, and so leave every index when
// they expire, without a change or a listing.
func TestUpgradeExpiry(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "ue:")
	s := newStore(t, f, TaskOptions{TTL: time.Minute})
	at := time.Now().UTC().Truncate(time.Millisecond)
	for i := range 5 {
		id := fmt.Sprintf("legacy%d", i)
		tk := &a2a.Task{ID: id, ContextID: "c", Owner: "al", Status: a2a.TaskStatus{State: a2a.TaskStateCanceled, Timestamp: at}}
		data, err := encodeTask(tk)
		if err != nil {
			t.Fatal(err)
		}
		ms := millis(tk)
		cmds := [][]string{
			{"HSET", s.prefix + "t:" + id, "d", string(data), "s", "5", "c", "c", "v", "1", "u", ms, "o", "al"},
			{"PEXPIRE", s.prefix + "t:" + id, "2500"},
			{"ZADD", s.prefix + "age", ms, id},
		}
		for k := range wantKeys(s.prefix, mtask{ctx: "c", own: "al", st: a2a.TaskStateCanceled}) {
			cmds = append(cmds, []string{"ZADD", k, ms, id})
		}
		for _, cmd := range cmds {
			if err := redisDo(t, f, cmd...).Error(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A live new task, so that the indexes are not empty for nothing.
	if err := s.Create(context.Background(), &a2a.Task{ID: "new", ContextID: "c", Owner: "al",
		Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: at}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(6 * time.Second)
	for {
		var left []string
		for i := range 5 {
			left = append(left, indexesHolding(t, f, s, fmt.Sprintf("legacy%d", i))...)
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("6 s on, the expired tasks of the older release are still in %v", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if where := indexesHolding(t, f, s, "new"); len(where) != 12 { // 8 indexes, age, exp, meta, oa
		t.Errorf("the new task is in %v", where)
	}
}

// TestEvictionSpread: MaxTasks lowered far below the tasks stored: each
// create evicts at most evictPerCreate, and the excess goes over the
// next creates, oldest first, from every index.
func TestEvictionSpread(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "es:")
	big := newStore(t, f, TaskOptions{})
	at := time.Now().UTC()
	var tasks []*a2a.Task
	for i := range 300 {
		tasks = append(tasks, &a2a.Task{ID: fmt.Sprintf("t%03d", i), ContextID: "c", Owner: "al", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: at}})
	}
	bulkCreate(t, big, tasks)
	// (Every task is al's: a share of the whole store, so that the
	// global bound is the one passed.)
	small := newStore(t, f, TaskOptions{MaxTasks: 100, MaxOwnerTasks: 100})
	ctx := context.Background()
	for i, want := range []int64{301 - evictPerCreate, 302 - 2*evictPerCreate, 303 - 3*evictPerCreate, 100, 100} {
		if err := small.Create(ctx, &a2a.Task{ID: fmt.Sprintf("n%d", i), ContextID: "c", Owner: "al",
			Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: at}}); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"age", "exp", "all", "o:al", "cos:2:2:al:c"} {
			if n, _ := redisDo(t, f, "ZCARD", small.prefix+k).AsInt64(); n != want {
				t.Errorf("after create %d: %s holds %d, want %d", i, k, n, want)
			}
		}
	}
	if ex, _ := redisDo(t, f, "EXISTS", small.prefix+"t:t204").AsInt64(); ex != 0 {
		t.Error("t204, among the 205 oldest, is still there")
	}
	if ex, _ := redisDo(t, f, "EXISTS", small.prefix+"t:t205").AsInt64(); ex != 1 {
		t.Error("t205 evicted: more than the excess")
	}
}
