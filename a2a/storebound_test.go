package a2a

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// TestMemoryStoreOneTaskBounded: the task being changed is never evicted,
// so a task that alone would pass the byte budget is refused (-32602, the
// task unchanged) rather than stored: continuing one task cannot grow the
// store past its budget. (Found by review on 2026-12-05: 50 continuations
// of 200 KiB held 10 MiB against a 1 MiB budget; the demo reached 366 MiB
// against 64.)
func TestMemoryStoreOneTaskBounded(t *testing.T) {
	const budget = 1 << 20
	s := newTestServer(t, func(c *Config) { c.MaxTaskBytes = budget })
	pad := strings.Repeat("x", 200<<10)
	body := func(taskID string, i int) string {
		tid := ""
		if taskID != "" {
			tid = `,"taskId":"` + taskID + `"`
		}
		return req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m`+strconv.Itoa(i)+`"`+tid+`,"parts":[{"text":"ask"},{"data":{"pad":"`+pad+`"}}]}}`)
	}
	a := call(t, s, "", body("", 0))
	id := get(parse(t, a.result), "task", "id").(string)
	refused := 0
	for i := 1; i <= 12; i++ {
		a = call(t, s, "", body(id, i))
		switch a.code {
		case 0:
		case -32602:
			refused++
		default:
			t.Fatalf("continuation %d: %+v", i, a)
		}
		st := memStore(s)
		st.mu.Lock()
		held := st.bytes
		st.mu.Unlock()
		if held > budget {
			t.Fatalf("continuation %d: the store holds %d bytes against a budget of %d", i, held, budget)
		}
	}
	if refused == 0 {
		t.Fatal("no continuation was refused")
	}
	if tk, _ := s.Task(id); tk == nil || len(tk.History) < 4 {
		t.Errorf("the task was lost or emptied: %+v", tk)
	}
	// A task that alone passes the budget is refused when created.
	if err := NewMemoryStore(0, 1000).Create(context.Background(), &Task{ID: "big", ContextID: "c", Metadata: []byte(`{"p":"` + strings.Repeat("y", 2000) + `"}`)}); !errors.Is(err, ErrTaskTooLarge) {
		t.Errorf("a task over the whole budget: %v, want ErrTaskTooLarge", err)
	}
}
