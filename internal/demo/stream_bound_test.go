package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/a2a"
)

// streamText is a text of n runes, some of them not ASCII, new each call.
func streamText(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzé€😀 "
	runes := []rune(alphabet)
	var b strings.Builder
	for range n {
		b.WriteRune(runes[rand.IntN(len(runes))])
	}
	return b.String()
}

// streamMessage is a SendMessage of the stream skill with a new message
// id and text of n runes; taskID, when not "", is the task it continues.
func streamMessage(chunks, delayMs, n int, taskID string) string {
	text, _ := json.Marshal(streamText(n))
	task := ""
	if taskID != "" {
		task = `"taskId":"` + taskID + `",`
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":{"configuration":{"returnImmediately":true},"metadata":{"skillId":"stream","chunks":%d,"delayMs":%d},`+
		`"message":{"role":"ROLE_USER","messageId":"m-%x",%s"parts":[{"text":%s}]}}}`,
		rand.IntN(1<<20), chunks, delayMs, rand.Uint64(), task, text)
}

// startStream sends a stream message and checks the answered state: the
// task's id, and its status text.
func startStream(t *testing.T, d *A2ADemo, body, want string) (id, status string) {
	t.Helper()
	res, code := a2aCall(t, d.Server.Endpoint(), "", body)
	if code != 0 || at(res, "task", "status", "state") != want {
		t.Fatalf("stream: %v %d, want %s", res, code, want)
	}
	id, _ = at(res, "task", "id").(string)
	status, _ = at(res, "task", "status", "message", "parts", 0, "text").(string)
	return id, status
}

// eventually waits up to 5 s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 5 s: %s", what)
		}
	}
}

// taskState is the stored state of the task id.
func taskState(d *A2ADemo, id string) a2a.TaskState {
	tk, _ := d.Server.Task(id)
	return tk.Status.State
}

// TestStreamBound: past MaxStreaming a stream task is rejected and
// nothing starts; a stream that finishes, or is canceled, gives its slot
// back. (Found by review on 2026-12-06: nothing bounded the stream skill's
// works, each up to 2.8 hours with its message's text.)
func TestStreamBound(t *testing.T) {
	d, err := NewA2A(A2AOptions{MaxStreaming: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ep := d.Server.Endpoint()
	short, _ := startStream(t, d, streamMessage(2, 1000, 8+rand.IntN(8), ""), "TASK_STATE_WORKING")
	long, _ := startStream(t, d, streamMessage(MaxChunks, 500, 64+rand.IntN(64), ""), "TASK_STATE_WORKING")
	_, status := startStream(t, d, streamMessage(MaxChunks, 10000, 1+rand.IntN(100), ""), "TASK_STATE_REJECTED")
	if status != tooManyStreams {
		t.Errorf("the third stream's status: %q, want %q", status, tooManyStreams)
	}
	if n := d.Streaming(); n != 2 {
		t.Errorf("streaming %d, want 2", n)
	}
	for _, id := range []string{short, long} {
		if s := taskState(d, id); s != a2a.TaskStateWorking {
			t.Errorf("task %s: %v while the third is rejected, want working", id, s)
		}
	}

	// The short one finishes: its slot is free.
	eventually(t, "the short stream has not completed", func() bool { return taskState(d, short) == a2a.TaskStateCompleted })
	eventually(t, "the finished stream holds its slot", func() bool { return d.Streaming() == 1 })
	startStream(t, d, streamMessage(MaxChunks, 10000, 1+rand.IntN(100), ""), "TASK_STATE_WORKING")
	startStream(t, d, streamMessage(MaxChunks, 10000, 1+rand.IntN(100), ""), "TASK_STATE_REJECTED")

	// The long one is canceled: its slot is free at its next chunk.
	if res, code := a2aCall(t, ep, "", cancelBody(long)); code != 0 || at(res, "status", "state") != "TASK_STATE_CANCELED" {
		t.Fatalf("cancel: %v %d", res, code)
	}
	eventually(t, "the canceled stream holds its slot", func() bool { return d.Streaming() == 1 })
	startStream(t, d, streamMessage(MaxChunks, 10000, 1+rand.IntN(100), ""), "TASK_STATE_WORKING")
	if n := d.Streaming(); n != 2 {
		t.Errorf("streaming %d, want 2", n)
	}
}

// TestStreamCancelFreesSlotAtOnce: a canceled stream gives its slot back
// when the cancel reaches it, not at its next chunk (up to 10 s later).
func TestStreamCancelFreesSlotAtOnce(t *testing.T) {
	d, err := NewA2A(A2AOptions{MaxStreaming: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	id, _ := startStream(t, d, streamMessage(MaxChunks, int(MaxChunkDelay/time.Millisecond), 5+rand.IntN(50), ""), "TASK_STATE_WORKING")
	startStream(t, d, streamMessage(2, 0, 1+rand.IntN(50), ""), "TASK_STATE_REJECTED")
	if res, code := a2aCall(t, d.Server.Endpoint(), "", cancelBody(id)); code != 0 || at(res, "status", "state") != "TASK_STATE_CANCELED" {
		t.Fatalf("cancel: %v %d", res, code)
	}
	start := time.Now()
	for d.Streaming() != 0 {
		if time.Since(start) > 2*time.Second {
			t.Fatalf("the canceled stream still holds its slot after %v (its next chunk is due %v after the start)", time.Since(start), MaxChunkDelay)
		}
		time.Sleep(5 * time.Millisecond)
	}
	next, _ := startStream(t, d, streamMessage(2, 0, 1+rand.IntN(50), ""), "TASK_STATE_WORKING")
	eventually(t, "the next stream has not completed", func() bool { return taskState(d, next) == a2a.TaskStateCompleted })
	if s := taskState(d, id); s != a2a.TaskStateCanceled {
		t.Errorf("the canceled task: %v", s)
	}
}

// TestStreamUnstoredFreesSlot: a stream reply the server could not store
// (the store down, or the continued task canceled meanwhile) never runs
// its Then: its slot is given back after storeWait, and a stored one
// keeps its slot past it.
func TestStreamUnstoredFreesSlot(t *testing.T) {
	t.Run("store down", func(t *testing.T) {
		store := &failingStore{MemoryStore: a2a.NewMemoryStore(0, 0), down: true}
		d, err := NewA2A(A2AOptions{MaxStreaming: 1, Tasks: store})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		d.storeWait = 50 * time.Millisecond
		if _, code := a2aCall(t, d.Server.Endpoint(), "", streamMessage(MaxChunks, 10000, 1+rand.IntN(100), "")); code != -32603 {
			t.Fatalf("stream with the store down: code %d, want -32603", code)
		}
		eventually(t, "the unstored stream holds its slot", func() bool { return d.Streaming() == 0 })
		store.down = false
		startStream(t, d, streamMessage(MaxChunks, 10000, 1+rand.IntN(100), ""), "TASK_STATE_WORKING")
		time.Sleep(4 * d.storeWait) // the guard has had its chance
		if n := d.Streaming(); n != 1 {
			t.Errorf("streaming %d, want the stored stream's slot kept", n)
		}
		startStream(t, d, streamMessage(MaxChunks, 10000, 1+rand.IntN(100), ""), "TASK_STATE_REJECTED")
	})
	t.Run("task canceled meanwhile", func(t *testing.T) {
		store := &cancelingStore{MemoryStore: a2a.NewMemoryStore(0, 0)}
		d, err := NewA2A(A2AOptions{MaxStreaming: 2, Tasks: store})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		d.storeWait = 50 * time.Millisecond
		id, _ := startStream(t, d, streamMessage(MaxChunks, 10000, 1+rand.IntN(100), ""), "TASK_STATE_WORKING")
		store.arm.Store(true)
		if _, code := a2aCall(t, d.Server.Endpoint(), "", streamMessage(MaxChunks, 10000, 1+rand.IntN(100), id)); code != -32004 {
			t.Fatalf("the continuation of a task canceled meanwhile: code %d, want -32004", code)
		}
		// The first stream's slot is held until its next chunk, 10 s
		// away; the continuation's is given back.
		eventually(t, "the unstored continuation holds its slot", func() bool { return d.Streaming() == 1 })
		startStream(t, d, streamMessage(MaxChunks, 10000, 1+rand.IntN(100), ""), "TASK_STATE_WORKING")
	})
}

// blockingStore is a memory store whose next Create, once armed, waits
// for unblock: a store slower than A2ADemo.storeWait.
type blockingStore struct {
	*a2a.MemoryStore
	arm     atomic.Bool
	entered chan struct{} // has a value when the armed Create waits
	release chan struct{}
	once    sync.Once
}

func newBlockingStore(t *testing.T) *blockingStore {
	s := &blockingStore{MemoryStore: a2a.NewMemoryStore(0, 0), entered: make(chan struct{}, 1), release: make(chan struct{})}
	t.Cleanup(s.unblock)
	return s
}

func (s *blockingStore) Create(ctx context.Context, t *a2a.Task) error {
	if s.arm.CompareAndSwap(true, false) {
		s.entered <- struct{}{}
		<-s.release
	}
	return s.MemoryStore.Create(ctx, t)
}

// unblock lets the waiting Create, and any later armed one, go on.
func (s *blockingStore) unblock() { s.once.Do(func() { close(s.release) }) }

// startBlocked sends a stream message whose Create blocks, on a goroutine
// of its own, and returns once the Create waits; the channel has the
// task id once it is answered.
func startBlocked(t *testing.T, d *A2ADemo, store *blockingStore) <-chan string {
	store.arm.Store(true)
	answered := make(chan string, 1)
	go func() {
		res, code := a2aCall(t, d.Server.Endpoint(), "", streamMessage(MaxChunks, 10000, 1+rand.IntN(100), ""))
		id, _ := at(res, "task", "id").(string)
		if code != 0 || at(res, "task", "status", "state") != "TASK_STATE_WORKING" {
			t.Errorf("the blocked stream: %v %d, want working", res, code)
		}
		answered <- id
	}()
	select {
	case <-store.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the blocked stream's Create has not run after 5 s")
	}
	return answered
}

// TestStreamSlowStoreNeverOverAdmits: a reply stored after its guard gave
// the slot back, and another stream took it, does not start (the bound
// holds): its task, stored working, is rejected.
func TestStreamSlowStoreNeverOverAdmits(t *testing.T) {
	store := newBlockingStore(t)
	d, err := NewA2A(A2AOptions{MaxStreaming: 1, Tasks: store})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.storeWait = 50 * time.Millisecond
	answered := startBlocked(t, d, store)
	eventually(t, "the blocked stream's slot was not given back", func() bool { return d.Streaming() == 0 })
	startStream(t, d, streamMessage(MaxChunks, 10000, 1+rand.IntN(100), ""), "TASK_STATE_WORKING")
	store.unblock()
	id := <-answered
	eventually(t, "the late stream's task is not rejected", func() bool { return taskState(d, id) == a2a.TaskStateRejected })
	if tk, _ := d.Server.Task(id); tk.Status.Message == nil || tk.Status.Message.Parts.Len() != 1 || tk.Status.Message.Parts.Slice()[0].Text != tooManyStreams {
		t.Errorf("the late stream's status: %+v", tk.Status.Message)
	}
	if n := d.Streaming(); n != 1 {
		t.Errorf("streaming %d, want 1 (MaxStreaming)", n)
	}
}

// TestStreamCloseReleases: Close returns at once, though streams are
// sending and a reply waits for its store; it gives every slot back, and
// the tasks stay working.
func TestStreamCloseReleases(t *testing.T) {
	store := newBlockingStore(t)
	d, err := NewA2A(A2AOptions{MaxStreaming: 4, Tasks: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close) // should the test stop before its Close
	var ids []string
	for range 3 {
		id, _ := startStream(t, d, streamMessage(MaxChunks, 10000, 1+rand.IntN(100), ""), "TASK_STATE_WORKING")
		ids = append(ids, id)
	}
	answered := startBlocked(t, d, store)
	if n := d.Streaming(); n != 4 {
		t.Errorf("streaming %d with a reply waiting for its store, want 4", n)
	}
	startStream(t, d, streamMessage(MaxChunks, 10000, 1+rand.IntN(100), ""), "TASK_STATE_REJECTED")
	closed := make(chan struct{})
	go func() { d.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
		t.Fatal("Close has not returned after 2 s")
	}
	if n := d.Streaming(); n != 0 {
		t.Errorf("streaming %d after Close, want 0", n)
	}
	store.unblock()
	ids = append(ids, <-answered)
	time.Sleep(20 * time.Millisecond) // the late reply's Then has had its chance
	if n := d.Streaming(); n != 0 {
		t.Errorf("streaming %d after the late reply was stored, want 0", n)
	}
	for _, id := range ids {
		if s := taskState(d, id); s != a2a.TaskStateWorking {
			t.Errorf("task %s after Close: %v, want working", id, s)
		}
	}
	_, status := startStream(t, d, streamMessage(MaxChunks, 10000, 1+rand.IntN(100), ""), "TASK_STATE_REJECTED")
	if status != "the server is shutting down" {
		t.Errorf("after Close: %q", status)
	}
}

// lateBroker is the LocalBroker whose Subscribe runs late, as a Then
// goroutine scheduled late under load would.
type lateBroker struct{ *a2a.LocalBroker }

func (b lateBroker) Subscribe(id string, f func(*a2a.TaskChange)) func() {
	time.Sleep(100 * time.Millisecond)
	return b.LocalBroker.Subscribe(id, f)
}

// A cancel stored before the stream's work subscribes to its task (Then
// runs on a goroutine of its own once the reply is stored) frees the slot
// at once too: the work reads the task's state after subscribing (found
// by review: the slot was held until the next chunk).
func TestStreamCancelBeforeSubscribe(t *testing.T) {
	d, err := NewA2A(A2AOptions{MaxStreaming: 1, Events: lateBroker{a2a.NewLocalBroker()}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	id, _ := startStream(t, d, streamMessage(MaxChunks, int(MaxChunkDelay/time.Millisecond), 5+rand.IntN(50), ""), "TASK_STATE_WORKING")
	if res, code := a2aCall(t, d.Server.Endpoint(), "", cancelBody(id)); code != 0 || at(res, "status", "state") != "TASK_STATE_CANCELED" {
		t.Fatalf("cancel: %v %d", res, code)
	}
	start := time.Now()
	for d.Streaming() != 0 {
		if time.Since(start) > 2*time.Second {
			t.Fatalf("the canceled stream still holds its slot after %v", time.Since(start))
		}
		time.Sleep(5 * time.Millisecond)
	}
}
