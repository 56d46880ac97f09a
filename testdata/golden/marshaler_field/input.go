package marshaler_field

import "encoding/json"

// Secret hides its value but encodes itself.
type Secret struct{ value string }

// MarshalJSON encodes the secret.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.value) }

// UnmarshalJSON decodes the secret.
func (s *Secret) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &s.value) }

// RotatePayload rotates a key.
//
//leasegen:task
type RotatePayload struct {
	Key Secret
}
