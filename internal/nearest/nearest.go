// Package nearest finds the known name a mistyped one most likely meant, so
// an error or warning can say "did you mean ...?".
package nearest

import "strings"

// maxLen bounds the names compared: a distance costs len(a)*len(b), and no
// stage, backend, event or label is longer.
const maxLen = 128

// Name returns the known name nearest to name (edit distance, case
// ignored), or "" when none is close enough to be a typo of it: at most
// half of the longer name's letters differ, or one contains the other.
// Ties go to the earlier known name.
func Name(name string, known []string) string {
	n := strings.ToLower(name)
	if n == "" || len(n) > maxLen {
		return ""
	}
	best, bestD := "", -1
	for _, k := range known {
		lk := strings.ToLower(k)
		if lk == "" || len(lk) > maxLen {
			continue
		}
		d := distance(n, lk)
		if !close(n, lk, d) {
			continue
		}
		if bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// close says whether a distance d between a and b is small enough for a
// typo: a short name may differ in 2 letters, a longer one in half of them
// ("stage-z" for stage-a-cpu; "nightly" is no typo of local).
func close(a, b string, d int) bool {
	if strings.Contains(a, b) || strings.Contains(b, a) {
		return true
	}
	longer := max(len(a), len(b))
	return d <= max(2, longer/2)
}

// distance is the Damerau-Levenshtein (optimal string alignment) distance
// between a and b, in bytes: a swap of two neighbours ("megatorn") counts 1.
func distance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
