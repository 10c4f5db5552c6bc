//go:build race

package reliability

// raceEnabled reports a -race build: memory and latency are then the race
// detector's (several times larger and slower), so the tests log them
// and do not judge them.
const raceEnabled = true
