package unexported_only_struct

type point struct{ x, y int }

// MovePayload holds a struct JSON cannot see into.
//
//leasegen:task
type MovePayload struct {
	To point
}
