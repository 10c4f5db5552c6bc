//go:build !race

package mcp

// raceEnabled: the race detector's sync.Pool drops items at random, so
// allocation counts of pooled paths are not exact under it.
const raceEnabled = false
