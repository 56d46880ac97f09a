package map_key_struct

type coord struct{ X, Y int }

// GridPayload has a map with struct keys.
//
//leasegen:task
type GridPayload struct {
	Cells map[coord]string
}
