package main

import (
	"math"
	"slices"
)

// spread is the median of some samples and their range.
type spread struct {
	Med, Min, Max float64
	N             int
}

func spreadOf(xs []float64) spread {
	if len(xs) == 0 {
		return spread{Med: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{Med: m, Min: s[0], Max: s[len(s)-1], N: len(s)}
}

func (s spread) ok() bool { return s.N > 0 && !math.IsNaN(s.Med) }
