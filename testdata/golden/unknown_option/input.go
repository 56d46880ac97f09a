package unknown_option

// ImportPayload imports a file.
//
//leasegen:task max_attempt=5 retries=3
type ImportPayload struct {
	File string
}
