//go:build race

package fastserver

// raceOn: the race detector is on, and sync.Pool drops some of what it
// is given back, so that tests cannot count on a pooled buffer.
const raceOn = true
