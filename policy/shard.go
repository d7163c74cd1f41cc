package policy

import (
	"cmp"
	"fmt"
	"slices"
)

// Partition names one shard of a suite.
type Partition struct {
	// ID is the 0-based shard index.
	ID int `json:"id"`
	// Size is the number of shards.
	Size int `json:"size"`
}

// String is how every miles-ci output names the shard, "shard 2/4": 1-based,
// as Miles' own run_suite.py prints it ("Partition: 2/4 (0-based id=1)"), the
// line a Miles maintainer knows by sight. Flags and JSON keep Miles' 0-based
// id (--auto-partition-id 1, --shard 1, "shard": 1), and a text that shows a
// Miles command or flag beside it adds "(0-based id=1)".
func (p Partition) String() string { return fmt.Sprintf("shard %d/%d", p.ID+1, p.Size) }

// Folder is the shard's results folder under its stage's, "2-of-4": the
// number String shows, in a form that cannot be taken for the 0-based id.
func (p Partition) Folder() string { return fmt.Sprintf("%d-of-%d", p.ID+1, p.Size) }

// MaxShards is the most shards a stage can have: GitHub Actions runs at most
// 256 jobs from one matrix. It bounds every shard count miles-ci reads (flags,
// the checkout's workflows), so none can make it plan without bound.
const MaxShards = 256

// Validate checks 0 <= ID < Size <= MaxShards.
func (p Partition) Validate() error {
	if p.Size <= 0 {
		return fmt.Errorf("--auto-partition-size must be positive (got %d)", p.Size)
	}
	if p.Size > MaxShards {
		return fmt.Errorf("--auto-partition-size must be at most %d (got %d): GitHub Actions runs at most %d jobs from one matrix", MaxShards, p.Size, MaxShards)
	}
	if p.ID < 0 || p.ID >= p.Size {
		return fmt.Errorf("--auto-partition-id must be in range [0, %d), but got %d", p.Size, p.ID)
	}
	return nil
}

// AssignShards balances tests over n shards (rules §5): sorted by est_time
// descending then file name ascending (stable), each goes to the shard with
// the smallest running total, lowest index on ties. Each shard keeps its tests
// in assignment order.
func AssignShards(tests []Registration, n int) [][]Registration {
	if n <= 0 {
		return nil
	}
	sorted := slices.Clone(tests)
	slices.SortStableFunc(sorted, func(a, b Registration) int {
		if c := cmp.Compare(b.EstTime, a.EstTime); c != 0 {
			return c
		}
		return cmp.Compare(a.File, b.File)
	})
	shards := make([][]Registration, n)
	totals := make([]float64, n)
	for _, t := range sorted {
		best := 0
		for i := 1; i < n; i++ {
			if totals[i] < totals[best] {
				best = i
			}
		}
		shards[best] = append(shards[best], t)
		totals[best] += t.EstTime
	}
	return shards
}

// Shard returns the tests of shard p.ID of p.Size.
func Shard(tests []Registration, p Partition) ([]Registration, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return AssignShards(tests, p.Size)[p.ID], nil
}
