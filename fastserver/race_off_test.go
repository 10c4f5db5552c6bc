//go:build !race

package fastserver

// raceOn: the race detector is on (see race_on_test.go).
const raceOn = false
