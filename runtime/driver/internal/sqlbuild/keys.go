package sqlbuild

import (
	"database/sql"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// FirstWaiting builds the statement that reads, for each key of free, the
// ids (and key) of its first free[key] WAITING tasks of taskType in id order: one
// index range per key, each cut to its count, joined with UNION ALL, so a
// key with a long waiting line costs what a short one does. status is the
// engine's status column for keyed tasks; numbered says the engine's
// placeholders are $1, $2... rather than ?; hint names the index to read
// ("": the planner's choice).
func FirstWaiting(taskType string, free map[string]int, status, hint string, numbered bool) (string, []any) {
	var b strings.Builder
	args := make([]any, 0, 2*len(free))
	placeholder := func(v any) string {
		args = append(args, v)
		if numbered {
			return "$" + strconv.Itoa(len(args))
		}
		return "?"
	}
	for i, key := range slices.Sorted(maps.Keys(free)) {
		if i > 0 {
			b.WriteString(" UNION ALL ")
		}
		b.WriteString("SELECT id, flow_key FROM (SELECT id, flow_key FROM leasegen_tasks" + hint + " WHERE flow_key = " + placeholder(key) +
			" AND task_type = " + placeholder(taskType) + " AND " + status + " = 'WAITING' ORDER BY id LIMIT " +
			strconv.Itoa(free[key]) + ") AS w" + strconv.Itoa(i))
	}
	return b.String(), args
}

// ScanWaiting reads FirstWaiting's rows, closes them, and returns the
// ids with how many belong to each key.
func ScanWaiting(rows *sql.Rows) ([]int64, map[string]int, error) {
	defer rows.Close()
	var ids []int64
	perKey := map[string]int{}
	for rows.Next() {
		var id int64
		var key string
		if err := rows.Scan(&id, &key); err != nil {
			return nil, nil, err
		}
		ids = append(ids, id)
		perKey[key]++
	}
	return ids, perKey, rows.Err()
}

// ScanWaitingByKey reads FirstWaiting's rows, closes them, and returns
// the ids by key, in id order.
func ScanWaitingByKey(rows *sql.Rows) (map[string][]leasetype.TaskID, error) {
	defer rows.Close()
	byKey := map[string][]leasetype.TaskID{}
	for rows.Next() {
		var id int64
		var key string
		if err := rows.Scan(&id, &key); err != nil {
			return nil, err
		}
		byKey[key] = append(byKey[key], leasetype.TaskID(id))
	}
	return byKey, rows.Err()
}

// KeyLimit is a stored key limit as operators see it: 0 for a key with a
// rate and no concurrency limit (driver.NoKeyLimit).
func KeyLimit(stored int) int {
	if stored == driver.NoKeyLimit {
		return 0
	}
	return stored
}
