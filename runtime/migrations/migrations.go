// Package migrations holds the leasegen schema as versioned SQL files, one
// folder per engine. The runtime applies them with Engine.Migrate; users of
// their own migration tool can copy the files as they are.
package migrations

import "embed"

// MySQL holds the MySQL/MariaDB migrations, named NNNN_name.sql.
//
//go:embed mysql/*.sql
var MySQL embed.FS

// SQLite holds the SQLite migrations, named NNNN_name.sql.
//
//go:embed sqlite/*.sql
var SQLite embed.FS

// Postgres holds the PostgreSQL migrations, named NNNN_name.sql.
//
//go:embed postgres/*.sql
var Postgres embed.FS
