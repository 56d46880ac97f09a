package leasetype

import (
	"encoding/json"
	"fmt"
)

// EncodeMetadata is a task's metadata as its row stores it: a JSON object,
// keys sorted, or nil when md is empty.
func EncodeMetadata(md map[string]string) []byte {
	if len(md) == 0 {
		return nil
	}
	b, err := json.Marshal(md)
	if err != nil {
		panic(err) // a map of strings always encodes
	}
	return b
}

// DecodeMetadata reads what EncodeMetadata stored; nil or empty is none.
func DecodeMetadata(b []byte) (map[string]string, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var md map[string]string
	if err := json.Unmarshal(b, &md); err != nil {
		return nil, fmt.Errorf("leasegen: task metadata is not a JSON object of strings: %w", err)
	}
	return md, nil
}
