package a2a

import (
	"context"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/fastserver"
)

// A stream that meets a gap in its task's changes before the task ends
// catches up from the stored task (each artifact whole, then the status)
// and goes on: the change that arrives late is not sent twice, and the
// changes after it come as usual.
func TestStreamCatchesUpAndGoesOn(t *testing.T) {
	release := make(chan struct{})
	b := delayBroker{LocalBroker: NewLocalBroker(), late: func(c *TaskChange) <-chan struct{} {
		for _, ev := range c.Events {
			if ev.Artifact != nil && ev.Artifact.ArtifactID == "slow" {
				return release
			}
		}
		return nil
	}}
	s, _, addr := streamServer(t, fastserver.Config{}, func(c *Config) { c.Events = b })
	id := holdTask(t, s)
	c := post(t, addr, "1.0", streamReq(2, "SubscribeToTask", `{"id":"`+id+`"}`))
	if _, _, err := c.next(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "subscribed", func() bool { return b.Subscribers() == 1 })
	ctx := context.Background()
	stored := make(chan error, 1)
	go func() {
		_, err := s.UpdateArtifact(ctx, id, ArtifactUpdate{Artifact: Artifact{ArtifactID: "slow", Parts: PartsOf(TextPart("part one"))}})
		stored <- err
	}()
	waitUntil(t, "artifact stored", func() bool { tk, _ := s.Task(id); return len(tk.Artifacts) == 1 })
	// A status change stored after it, published first: the gap.
	if _, err := s.UpdateTask(ctx, id, &Reply{State: TaskStateWorking, Status: &Message{Parts: PartsOf(TextPart("halfway"))}}); err != nil {
		t.Fatal(err)
	}
	// The catch-up comes before the late change is released.
	var evs []map[string]any
	for range 2 {
		data, _, err := c.next()
		if err != nil || data == "" {
			t.Fatalf("the catch-up: %q, %v", data, err)
		}
		evs = append(evs, c.result(data, "2"))
	}
	close(release)
	if err := <-stored; err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateArtifact(ctx, id, ArtifactUpdate{Artifact: Artifact{ArtifactID: "slow", Parts: PartsOf(TextPart("part two"))}, Append: true, LastChunk: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateTask(ctx, id, &Reply{State: TaskStateCompleted}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range append(evs, c.events("2")...) {
		k, m := kind10(t, ev)
		switch k {
		case "artifactUpdate":
			a, _ := m["artifact"].(map[string]any)
			parts, _ := a["parts"].([]any)
			var texts []string
			for _, p := range parts {
				pm, _ := p.(map[string]any)
				texts = append(texts, pm["text"].(string))
			}
			app, _ := m["append"].(bool)
			k += "(" + strings.Join(texts, "+") + map[bool]string{true: ", append", false: ""}[app] + ")"
		case "statusUpdate":
			st, _ := m["status"].(map[string]any)
			k += "(" + st["state"].(string) + ")"
		}
		got = append(got, k)
	}
	want := "artifactUpdate(part one),statusUpdate(TASK_STATE_WORKING),artifactUpdate(part two, append),statusUpdate(TASK_STATE_COMPLETED)"
	if strings.Join(got, ",") != want {
		t.Errorf("stream after the task:\n got %s\nwant %s", strings.Join(got, ","), want)
	}
}
