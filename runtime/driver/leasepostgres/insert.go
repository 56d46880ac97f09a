package leasepostgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasepostgres/internal/pgdb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// insertChunkRows bounds the rows of one batch statement.
const insertChunkRows = 1000

// Insert stores tasks and returns their ids in order; a task whose
// (type, idempotency key) exists gets the existing id. One task is one
// INSERT; a batch is one statement per 1,000 rows, atomic: in q's
// transaction, or in one of its own.
func (s *store) Insert(ctx context.Context, q driver.DBTX, tasks []driver.NewTask) ([]leasetype.TaskID, error) {
	if len(tasks) == 1 {
		t := tasks[0]
		id, err := s.q.TaskInsert(ctx, q, pgdb.TaskInsertParams{
			TaskType: t.Type, Payload: t.Payload, Priority: int32(t.Priority),
			RunAt: sqlbuild.NullTime(t.RunAt), DelayUs: micros(t.Delay),
			MaxAttempts: int32(t.MaxAttempts), OwnerID: t.OwnerID,
			IdempotencyKey: sqlbuild.NullString(t.Key), Metadata: sqlbuild.NullString(string(t.Metadata)),
		})
		if err != nil {
			return nil, fmt.Errorf("leasegen: enqueue %s: %w", t.Type, err)
		}
		return []leasetype.TaskID{leasetype.TaskID(id)}, nil
	}
	if db, ok := q.(*sql.DB); ok {
		var ids []leasetype.TaskID
		err := s.inTx(ctx, db, "", func(tx *sql.Tx) error {
			var err error
			ids, err = s.insertChunks(ctx, tx, tasks)
			return err
		})
		return ids, err
	}
	return s.insertChunks(ctx, q, tasks)
}

func (s *store) insertChunks(ctx context.Context, q driver.DBTX, tasks []driver.NewTask) ([]leasetype.TaskID, error) {
	ids := make([]leasetype.TaskID, 0, len(tasks))
	for start := 0; start < len(tasks); start += insertChunkRows {
		chunk := tasks[start:min(start+insertChunkRows, len(tasks))]
		chunkIDs, err := s.insertChunk(ctx, q, chunk)
		if err != nil {
			return nil, fmt.Errorf("leasegen: enqueue batch of %d: %w", len(tasks), err)
		}
		ids = append(ids, chunkIDs...)
	}
	return ids, nil
}

// insertChunk inserts the distinct tasks of chunk in one statement: a key
// repeated within it goes in once (ON CONFLICT cannot touch a row twice),
// and every task that repeats it gets that row's id.
func (s *store) insertChunk(ctx context.Context, q driver.DBTX, chunk []driver.NewTask) ([]leasetype.TaskID, error) {
	type typeKey struct{ typ, key string }
	first := map[typeKey]int{} // a key's index among the rows sent
	sentAt := make([]int, len(chunk))
	var p pgdb.TaskInsertManyParams
	for i, t := range chunk {
		if t.Key != "" {
			if at, ok := first[typeKey{t.Type, t.Key}]; ok {
				sentAt[i] = at
				continue
			}
			first[typeKey{t.Type, t.Key}] = len(p.TaskTypes)
		}
		sentAt[i] = len(p.TaskTypes)
		runAt := int64(-1)
		if !t.RunAt.IsZero() {
			runAt = t.RunAt.UnixMicro()
		}
		p.TaskTypes = append(p.TaskTypes, t.Type)
		payload := t.Payload
		if payload == nil {
			payload = []byte{} // a nil element of a bytea[] would be NULL
		}
		p.Payloads = append(p.Payloads, payload)
		p.Priorities = append(p.Priorities, int32(t.Priority))
		p.RunAtsUs = append(p.RunAtsUs, runAt)
		p.DelaysUs = append(p.DelaysUs, micros(t.Delay))
		p.MaxAttempts = append(p.MaxAttempts, int32(t.MaxAttempts))
		p.OwnerIds = append(p.OwnerIds, t.OwnerID)
		p.IdempotencyKeys = append(p.IdempotencyKeys, t.Key)
		p.Metadatas = append(p.Metadatas, string(t.Metadata))
	}
	rows, err := s.insertRows(ctx, nativeArrays{q}, p, len(first) > 0)
	if err != nil {
		return nil, err
	}
	if len(rows) != len(p.TaskTypes) {
		return nil, fmt.Errorf("insert returned %d ids for %d rows", len(rows), len(p.TaskTypes))
	}
	for i, r := range rows { // the order the ids are matched by
		if r.TaskType != p.TaskTypes[i] || r.IdempotencyKey.String != p.IdempotencyKeys[i] {
			return nil, fmt.Errorf("insert returned row %d out of order (%s %q, want %s %q)", i, r.TaskType, r.IdempotencyKey.String, p.TaskTypes[i], p.IdempotencyKeys[i])
		}
	}
	ids := make([]leasetype.TaskID, len(chunk))
	for i := range chunk {
		ids[i] = leasetype.TaskID(rows[sentAt[i]].ID)
	}
	return ids, nil
}

// insertRows runs the batch's INSERT: with ON CONFLICT only when a row
// has a key, since that clause makes every row's insert speculative.
func (s *store) insertRows(ctx context.Context, q driver.DBTX, p pgdb.TaskInsertManyParams, keyed bool) ([]pgdb.TaskInsertManyRow, error) {
	if keyed {
		return s.q.TaskInsertMany(ctx, q, p)
	}
	unkeyed, err := s.q.TaskInsertManyUnkeyed(ctx, q, pgdb.TaskInsertManyUnkeyedParams(p))
	rows := make([]pgdb.TaskInsertManyRow, len(unkeyed))
	for i, r := range unkeyed {
		rows[i] = pgdb.TaskInsertManyRow(r)
	}
	return rows, err
}

// TaskInsert hands Insert the connection under q: Insert passes its own
// arrays, and runs a batch on the pool in a transaction of its own.
func (t tables) TaskInsert(ctx context.Context, tasks []driver.NewTask) ([]leasetype.TaskID, error) {
	return t.s.Insert(ctx, t.q.(nativeArrays).db, tasks)
}
