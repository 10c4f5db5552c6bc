//go:build race

package decode

// raceEnabled skips the long assembly-versus-Go comparisons under the race
// detector: they share no memory between goroutines, and CI runs them
// without it.
const raceEnabled = true
