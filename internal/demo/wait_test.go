package demo

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/a2a"
	"github.com/rpcedge/rpcedge/fleet"
	"github.com/rpcedge/rpcedge/internal/services"
)

// waitBody asks for the wait skill without waiting for the task to end
// (returnImmediately): its task stays working for seconds.
func waitBody(meta string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"configuration":{"returnImmediately":true},"metadata":{"skillId":"wait"` + meta +
		`},"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"hold"}]}}}`
}

// The wait skill: working until canceled (then canceled once, whoever
// asks next is told -32002), or until its deadline (then completed).
func TestWaitSkill(t *testing.T) {
	d, err := NewA2A(A2AOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ep := d.Server.Endpoint()
	res, code := a2aCall(t, ep, "", waitBody(`,"seconds":60`))
	if code != 0 || at(res, "task", "status", "state") != "TASK_STATE_WORKING" {
		t.Fatalf("wait: %v %d", res, code)
	}
	id := at(res, "task", "id").(string)
	if d.Waiting() != 1 {
		t.Errorf("waiting %d", d.Waiting())
	}
	// Racing cancels: exactly one succeeds.
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, codes[i] = a2aCall(t, ep, "", `{"jsonrpc":"2.0","id":2,"method":"CancelTask","params":{"id":"`+id+`"}}`)
		}()
	}
	wg.Wait()
	ok := 0
	for _, c := range codes {
		switch c {
		case 0:
			ok++
		case a2a.CodeTaskNotCancelable:
		default:
			t.Errorf("cancel answered %d", c)
		}
	}
	if ok != 1 {
		t.Errorf("%d cancels succeeded, want exactly 1 (%v)", ok, codes)
	}

	// A short deadline: completed by itself.
	res, _ = a2aCall(t, ep, "", waitBody(`,"seconds":0.05`))
	id2 := at(res, "task", "id").(string)
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if tk, ok := d.Server.Task(id2); ok && tk.Status.State == a2a.TaskStateCompleted {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	tk, _ := d.Server.Task(id2)
	if tk.Status.State != a2a.TaskStateCompleted || len(tk.Artifacts) != 1 {
		t.Fatalf("after the deadline: %+v", tk)
	}
	if _, code := a2aCall(t, ep, "", `{"jsonrpc":"2.0","id":2,"method":"CancelTask","params":{"id":"`+id2+`"}}`); code != a2a.CodeTaskNotCancelable {
		t.Errorf("cancel after completion: %d", code)
	}
	// The canceled task stays canceled (its timer was stopped by the
	// cancel: TestWaitCancelFreesSlot).
	if tk, _ := d.Server.Task(id); tk.Status.State != a2a.TaskStateCanceled {
		t.Errorf("canceled task: %v", tk.Status.State)
	}
	for _, meta := range []string{`,"seconds":0`, `,"seconds":-1`, `,"seconds":"5"`, `,"seconds":3601`, `,"seconds":1e999`} {
		if _, code := a2aCall(t, ep, "", waitBody(meta)); code != -32602 {
			t.Errorf("%s: code %d, want -32602", meta, code)
		}
	}
	// A waiting task takes no more messages.
	res, _ = a2aCall(t, ep, "", waitBody(`,"seconds":60`))
	id3 := at(res, "task", "id").(string)
	if _, code := a2aCall(t, ep, "", `{"jsonrpc":"2.0","id":3,"method":"SendMessage","params":{"metadata":{"skillId":"wait"},"message":{"role":"ROLE_USER","messageId":"m2","taskId":"`+id3+`","parts":[{"text":"more"}]}}}`); code != a2a.CodeUnsupportedOperation {
		t.Errorf("continuing a waiting task: %d", code)
	}
}

// The bound on waiting tasks, and Close.
func TestWaitBound(t *testing.T) {
	d, err := NewA2A(A2AOptions{MaxWaiting: 2})
	if err != nil {
		t.Fatal(err)
	}
	ep := d.Server.Endpoint()
	for i, want := range []string{"TASK_STATE_WORKING", "TASK_STATE_WORKING", "TASK_STATE_REJECTED"} {
		res, code := a2aCall(t, ep, "", waitBody(""))
		if code != 0 || at(res, "task", "status", "state") != want {
			t.Errorf("wait %d: %v %d, want %s", i, res, code, want)
		}
	}
	d.Close()
	if d.Waiting() != 0 {
		t.Errorf("waiting after Close: %d", d.Waiting())
	}
	if res, _ := a2aCall(t, ep, "", waitBody("")); at(res, "task", "status", "state") != "TASK_STATE_REJECTED" {
		t.Errorf("after Close: %v", res)
	}
}

// cancelBody is a CancelTask of the task id.
func cancelBody(id string) string {
	return `{"jsonrpc":"2.0","id":2,"method":"CancelTask","params":{"id":"` + id + `"}}`
}

// TestWaitCancelFreesSlot: a canceled wait task gives its slot back
// (MaxWaiting) when the cancel is answered, not at its deadline: the next
// wait task is taken, and its timer and subscription are gone. (Found by
// review: the slot was held until the deadline, up to an hour, so a few
// canceled tasks locked the skill.)
func TestWaitCancelFreesSlot(t *testing.T) {
	d, err := NewA2A(A2AOptions{MaxWaiting: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ep := d.Server.Endpoint()
	broker := d.Server.Events().(*a2a.LocalBroker)
	start := func(want string) string {
		t.Helper()
		res, code := a2aCall(t, ep, "", waitBody(`,"seconds":3600`))
		if code != 0 || at(res, "task", "status", "state") != want {
			t.Fatalf("wait: %v %d, want %s", res, code, want)
		}
		return at(res, "task", "id").(string)
	}
	for range 3 { // each cancel frees the one slot for the next task
		id := start("TASK_STATE_WORKING")
		start("TASK_STATE_REJECTED") // the slot is taken
		if n := d.Waiting(); n != 1 {
			t.Fatalf("waiting %d, want 1", n)
		}
		if res, code := a2aCall(t, ep, "", cancelBody(id)); code != 0 || at(res, "status", "state") != "TASK_STATE_CANCELED" {
			t.Fatalf("cancel: %v %d", res, code)
		}
		// The in-process broker delivers the cancel before CancelTask
		// answers: the slot is free now, not eventually.
		if n := d.Waiting(); n != 0 {
			t.Fatalf("waiting %d after the cancel, want 0", n)
		}
	}
	id := start("TASK_STATE_WORKING")
	d.Close() // waits for the subscriptions the cancels ended
	if n := broker.Subscribers(); n != 0 {
		t.Errorf("%d subscriptions after Close, want 0", n)
	}
	if tk, ok := d.Server.Task(id); !ok || tk.Status.State != a2a.TaskStateWorking {
		t.Errorf("a task waiting at Close: %+v %v, want it working", tk, ok)
	}
}

// TestWaitCancelFreesSlotFleet: in a fleet, a cancel through another
// instance frees the slot of the instance that holds the wait task, as
// the cancel's change reaches it over Redis pub/sub.
func TestWaitCancelFreesSlotFleet(t *testing.T) {
	r := services.StartRedis(t)
	var demos [2]*A2ADemo
	for i, name := range []string{"a", "b"} {
		f, err := fleet.New(fleet.Options{URL: r.URL(), Instance: name, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(f.Close)
		ts, err := f.TaskStore(fleet.TaskOptions{})
		if err != nil {
			t.Fatal(err)
		}
		d, err := NewA2A(A2AOptions{Tasks: ts, Events: f.Broker(), MaxWaiting: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(d.Close)
		demos[i] = d
	}
	a, b := demos[0], demos[1]
	// Until a listens to the fleet's channel, what b publishes is lost
	// (pub/sub): a probe change, sent again until a has it.
	heard := make(chan struct{}, 1)
	unsub := a.Server.Events().Subscribe("probe", func(*a2a.TaskChange) {
		select {
		case heard <- struct{}{}:
		default:
		}
	})
	probe := &a2a.TaskChange{TaskID: "probe", Seq: 1, Events: []a2a.TaskEvent{{Status: &a2a.TaskStatus{State: a2a.TaskStateWorking}}}}
	deadline := time.Now().Add(5 * time.Second)
	for listening := false; !listening; {
		if time.Now().After(deadline) {
			t.Fatal("a does not hear b's changes 5 s after they started")
		}
		b.Server.Events().Publish(context.Background(), probe)
		select {
		case <-heard:
			listening = true
		case <-time.After(20 * time.Millisecond):
		}
	}
	unsub()
	res, code := a2aCall(t, a.Server.Endpoint(), "", waitBody(`,"seconds":3600`))
	if code != 0 || at(res, "task", "status", "state") != "TASK_STATE_WORKING" {
		t.Fatalf("wait on a: %v %d", res, code)
	}
	id := at(res, "task", "id").(string)
	if res, code := a2aCall(t, b.Server.Endpoint(), "", cancelBody(id)); code != 0 || at(res, "status", "state") != "TASK_STATE_CANCELED" {
		t.Fatalf("cancel through b: %v %d", res, code)
	}
	for deadline = time.Now().Add(5 * time.Second); a.Waiting() != 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a still holds %d waiting tasks 5 s after the cancel through b", a.Waiting())
		}
	}
	if res, code := a2aCall(t, a.Server.Endpoint(), "", waitBody(`,"seconds":3600`)); code != 0 || at(res, "task", "status", "state") != "TASK_STATE_WORKING" {
		t.Errorf("wait on a after the cancel: %v %d, want working", res, code)
	}
}

// failingStore is a memory store whose Create fails while down is set.
type failingStore struct {
	*a2a.MemoryStore
	down bool
}

func (f *failingStore) Create(ctx context.Context, t *a2a.Task) error {
	if f.down {
		return a2a.ErrStoreUnavailable
	}
	return f.MemoryStore.Create(ctx, t)
}

// TestWaitUnstoredFreesSlot: a wait task whose reply the server could not
// store (no task exists to cancel or complete) gives its slot back after
// storeWait, not at its deadline; a stored one keeps it (found by review
// on 2026-12-05: an hour-long slot per failed request).
func TestWaitUnstoredFreesSlot(t *testing.T) {
	store := &failingStore{MemoryStore: a2a.NewMemoryStore(0, 0), down: true}
	d, err := NewA2A(A2AOptions{MaxWaiting: 1, Tasks: store})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.storeWait = 50 * time.Millisecond
	ep := d.Server.Endpoint()
	if _, code := a2aCall(t, ep, "", waitBody(`,"seconds":3600`)); code != -32603 {
		t.Fatalf("wait with the store down: code %d, want -32603", code)
	}
	deadline := time.Now().Add(5 * time.Second)
	for d.Waiting() != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := d.Waiting(); n != 0 {
		t.Fatalf("waiting %d after the reply failed to be stored, want 0", n)
	}
	store.down = false
	res, code := a2aCall(t, ep, "", waitBody(`,"seconds":3600`))
	if code != 0 || at(res, "task", "status", "state") != "TASK_STATE_WORKING" {
		t.Fatalf("wait with the store up: %v %d", res, code)
	}
	time.Sleep(4 * d.storeWait) // the guard has had its chance
	if n := d.Waiting(); n != 1 {
		t.Errorf("waiting %d, want the stored task's slot kept", n)
	}
}
