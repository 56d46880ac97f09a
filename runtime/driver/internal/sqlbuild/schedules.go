package sqlbuild

import (
	"database/sql"
	"encoding/json"

	"github.com/leasegen/leasegen/runtime/leasetype"
)

// StatusOf reads a status column a driver scans without a type (a scalar
// subquery's): nil, string or bytes; "" for none.
func StatusOf(v any) leasetype.Status {
	switch s := v.(type) {
	case string:
		return leasetype.Status(s)
	case []byte:
		return leasetype.Status(s)
	}
	return ""
}

// EncodeNames is a worker's schedule names as the schedules column holds
// them: NULL for none.
func EncodeNames(names []string) sql.NullString {
	if len(names) == 0 {
		return sql.NullString{}
	}
	b, _ := json.Marshal(names) // strings always encode
	return sql.NullString{String: string(b), Valid: true}
}

// DecodeNames reads the schedules column.
func DecodeNames(s sql.NullString) []string {
	if !s.Valid {
		return nil
	}
	var names []string
	_ = json.Unmarshal([]byte(s.String), &names) // a value no worker wrote reads as none
	return names
}
