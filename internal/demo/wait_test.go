package demo

import (
	"sync"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/a2a"
)

func waitBody(meta string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"metadata":{"skillId":"wait"` + meta +
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
	// The canceled task stays canceled after its deadline would have
	// passed (its timer keeps running: 60 s; nothing to see here but the
	// state).
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
