package mcp

import (
	"testing"
	"time"
)

// A full session table makes room by ending the least recently used
// sessions idle past Reclaim without a stream; it never ends one used
// more recently, nor one with an open GET stream; with no room it refuses
// initialize with 503 and Retry-After, and scans for room at most once a
// second, so that a flood of initializes at the cap costs no scan each
// (found by review on 2026-12-06: 10,000 initializes kept every new
// client out for the 30-minute idle time, and each refused one scanned
// the whole table under the lock every session request takes).
func TestSessionsReclaim(t *testing.T) {
	tab := &sessionTable{opts: SessionOptions{Max: 200, Idle: time.Hour, Queue: 1, Reclaim: 5 * time.Minute}, m: map[string]*session{}}
	t0 := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 200 {
		ss, err := tab.create(Version20251125, nil, "", t0.Add(time.Duration(i)*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ss.id)
	}
	// Full, nothing idle past Reclaim: refused, one scan; again within the
	// second: refused without a scan.
	if _, err := tab.create(Version20251125, nil, "", t0.Add(time.Second)); err != errSessionFull || err.RetryAfter != 1 {
		t.Fatalf("full, all fresh: %v", err)
	}
	if _, err := tab.create(Version20251125, nil, "", t0.Add(1500*time.Millisecond)); err != errSessionFull || tab.scans != 1 {
		t.Fatalf("full again within the second: %v, %d scans, want 1", err, tab.scans)
	}
	// Ten minutes on: sessions 0-9 were used again a moment ago, session
	// 10 holds a GET stream; the rest are idle past Reclaim.
	now := t0.Add(10 * time.Minute)
	for _, id := range ids[:10] {
		if tab.lookup([]byte(id), "", now.Add(-time.Second)) == nil {
			t.Fatal("a live session not found")
		}
	}
	streamed := tab.m[ids[10]]
	if _, _, ok := streamed.attach(&sessionStream{}); !ok {
		t.Fatal("attach")
	}
	fresh, err := tab.create(Version20251125, nil, "", now)
	if err != nil {
		t.Fatalf("full with idle sessions: %v", err)
	}
	// Room for a hundredth of Max: the two least recently used idle
	// sessions (11 and 12) ended, one new: the next initialize needs no
	// scan.
	if len(tab.m) != 199 || tab.scans != 2 {
		t.Fatalf("%d sessions, %d scans; want 199 (two ended, one new) and 2", len(tab.m), tab.scans)
	}
	for i, id := range ids {
		_, alive := tab.m[id]
		if want := i < 11 || i > 12; alive != want {
			t.Errorf("session %d alive %v, want %v", i, alive, want)
		}
	}
	if tab.lookup([]byte(ids[11]), "", now) != nil {
		t.Error("an ended session still found")
	}
	if _, ok := tab.m[fresh.id]; !ok {
		t.Error("the new session is not in the table")
	}
	// A second apart (a scan each), initializes end the idle sessions in
	// turn, within Reclaim of the recent ones' use: those stay.
	at := now
	for range 400 {
		at = at.Add(1001 * time.Millisecond)
		if _, err := tab.create(Version20251125, nil, "", at); err == errSessionFull {
			break
		}
	}
	if at.Sub(now) >= 5*time.Minute {
		t.Fatalf("still creating %v later: idle sessions never ran out", at.Sub(now))
	}
	for i, id := range ids {
		_, alive := tab.m[id]
		if want := i < 11; alive != want {
			t.Errorf("after the idle ran out: session %d alive %v, want %v", i, alive, want)
		}
	}

	// Reclaim at least Idle: a full table waits for expiry, as before.
	never := &sessionTable{opts: SessionOptions{Max: 3, Idle: time.Minute, Queue: 1, Reclaim: time.Minute}, m: map[string]*session{}}
	for range 3 {
		if _, err := never.create(Version20251125, nil, "", t0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := never.create(Version20251125, nil, "", t0.Add(59*time.Second)); err != errSessionFull {
		t.Fatalf("Reclaim = Idle, none expired: %v", err)
	}
	if _, err := never.create(Version20251125, nil, "", t0.Add(61*time.Second)); err != nil {
		t.Fatalf("Reclaim = Idle, all expired: %v", err)
	}
}

// Over HTTP: the 503 carries Retry-After; a reclaimed session's client
// gets 404 and initializes again.
func TestSessionsReclaimHTTP(t *testing.T) {
	_, url := sessionServer(t, SessionOptions{Max: 2, Reclaim: 100 * time.Millisecond})
	var ids []string
	for range 2 {
		resp, _ := do(t, "POST", url, "", initialize)
		ids = append(ids, resp.Header.Get(HeaderSession))
	}
	if resp, body := do(t, "POST", url, "", initialize); resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("full: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	time.Sleep(1100 * time.Millisecond) // past Reclaim, and past the second between scans
	ping := `{"jsonrpc":"2.0","id":5,"method":"ping"}`
	if resp, body := do(t, "POST", url, ids[1], ping); resp.StatusCode != 200 {
		t.Fatalf("ping: %d %s", resp.StatusCode, body)
	}
	resp, _ := do(t, "POST", url, "", initialize)
	if resp.StatusCode != 200 || resp.Header.Get(HeaderSession) == "" {
		t.Fatalf("full with an idle session: %d", resp.StatusCode)
	}
	if resp, _ := do(t, "POST", url, ids[0], ping); resp.StatusCode != 404 {
		t.Errorf("the reclaimed session: %d, want 404", resp.StatusCode)
	}
	if resp, _ := do(t, "POST", url, ids[1], ping); resp.StatusCode != 200 {
		t.Errorf("the session used since: %d, want 200", resp.StatusCode)
	}
}
