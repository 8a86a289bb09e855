package zk_test

import (
	"sync"
	"testing"

	"github.com/svc-gov/svc/pkg/zk"
	"github.com/svc-gov/svc/pkg/zk/conditions"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

var below = sync.OnceValues(func() (*zk.Keys, error) { return zk.DevSetup(zkverify.CircuitBelowThreshold, nil) })

// below_threshold_check against threshold_check (BenchmarkConditionProve,
// BenchmarkConditionVerify), the same statement sizes, in the same run
// (docs/BENCHMARKS.md).
func BenchmarkConditionBelowProve(b *testing.B) {
	k, err := below()
	if err != nil {
		b.Fatal(err)
	}
	salt, _ := conditions.NewSalt()
	for b.Loop() {
		if _, err := zk.ProveCondition(k, 500, 731, salt); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConditionBelowVerify(b *testing.B) {
	k, err := below()
	if err != nil {
		b.Fatal(err)
	}
	benchConditionVerify(b, k, 500, 731)
}
