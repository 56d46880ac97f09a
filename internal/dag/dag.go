// Package dag orders the steps of a workflow, parents first: one algorithm
// for the generator's check at go generate and the runtime's at enqueue.
package dag

// Order returns nodes 0..len(parents)-1 in an order where each comes after
// every node in its parents (Kahn's algorithm; among the nodes free at
// once, in their own order), and, when some nodes are on a cycle or after
// one, those nodes in their own order instead of an order.
func Order(parents [][]int) (order, cyclic []int) {
	children := make([][]int, len(parents))
	left := make([]int, len(parents))
	var free []int
	for i, ps := range parents {
		for _, p := range ps {
			children[p] = append(children[p], i)
		}
		if left[i] = len(ps); left[i] == 0 {
			free = append(free, i)
		}
	}
	for len(free) > 0 {
		i := free[0]
		free = free[1:]
		order = append(order, i)
		for _, c := range children[i] {
			if left[c]--; left[c] == 0 {
				free = append(free, c)
			}
		}
	}
	if len(order) == len(parents) {
		return order, nil
	}
	for i, n := range left {
		if n > 0 {
			cyclic = append(cyclic, i)
		}
	}
	return nil, cyclic
}
