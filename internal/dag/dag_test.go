package dag

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOrder(t *testing.T) {
	for _, tc := range []struct {
		name          string
		parents       [][]int
		order, cyclic []int
	}{
		{"empty", nil, nil, nil},
		{"diamond given child first", [][]int{{1, 2}, {3}, {3}, nil}, []int{3, 1, 2, 0}, nil},
		{"free nodes keep their order", [][]int{nil, {0}, nil}, []int{0, 2, 1}, nil},
		{"a cycle and what follows it", [][]int{nil, {0, 3}, {1}, {2}, {3}}, nil, []int{1, 2, 3, 4}},
		{"a node after itself", [][]int{{0}}, nil, []int{0}},
	} {
		order, cyclic := Order(tc.parents)
		if diff := cmp.Diff(tc.order, order); diff != "" {
			t.Errorf("%s: order (-want +got):\n%s", tc.name, diff)
		}
		if diff := cmp.Diff(tc.cyclic, cyclic); diff != "" {
			t.Errorf("%s: cyclic (-want +got):\n%s", tc.name, diff)
		}
	}
}
